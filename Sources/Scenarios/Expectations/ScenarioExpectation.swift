import Audit

/// What a scenario requires. The capture-based kinds are judged from the audit; the others
/// from the app's events and the bootstrap timeline.
public enum ScenarioExpectation: Sendable, Equatable {
  /// Nothing left the device outside Tor, except what the user chose (exposure).
  case noLeak
  /// A canary: a leak of each of these classes must be caught.
  case leakCaught(classes: [LeakClass])
  /// Messages and connects asked for while Tor was not ready were queued, and none was sent
  /// until Tor became ready.
  case requestsQueuedBeforeReady
  /// A notification was posted by a virtual time; with `count`, exactly that many times.
  case notification(name: String, by: Double, count: Int?)
  /// A notification was not posted before a time (nil: during the whole run).
  case noNotification(name: String, before: Double?)
  /// An event matching a pattern ("relay-rejected reason=limitReached") happened by a time;
  /// with `count`, exactly that many times.
  case event(String, by: Double, count: Int?)
  /// No event matching a pattern happened before a time (nil: during the whole run).
  case noEvent(String, before: Double?)
  /// A request went out over this transport by a time.
  case requestSent(transport: Transport, by: Double)
  /// The proxy mode in force at a virtual time.
  case proxyMode(Transport, at: Double)
  /// The bootstrap summary at a time (nil: at the end of the run).
  case bootstrapSummary(text: String, match: TextMatch, at: Double?)
  /// These events happened in this order (other events may come between).
  case eventsInOrder([String])
  /// Every packet went to an allowed Tor address: no leak and no exposure either.
  case trafficOnlyToTor
  /// Direct traffic happened while the user had turned Tor off, and it is reported as the
  /// user's choice (exposure), not as a leak.
  case clearnetByUserChoice
  /// Real-Tor lane: tor's bootstrap reached `progress`; at 100 a fetch through the exit must
  /// also succeed (100% does not by itself prove a usable circuit).
  case bootstrapReaches(progress: Int)
  /// Real-Tor lane: tor's bootstrap never passed `atMost`; with `tag`, tor's furthest phase
  /// carried that tag (conn, conn_done, conn_pt ...).
  case bootstrapStuck(atMost: Int, tag: String?)
  /// Real-Tor lane: tor reported a bootstrap problem with this reason (CONNECTREFUSED, TIMEOUT,
  /// DONE, IOERROR, ...).
  case bootstrapProblem(reason: String)
  /// Real-Tor lane: tor bootstrapped through the pluggable transport (conn_pt/conn_done_pt).
  case bootstrapThroughBridge
  /// Real-Tor lane: every allowed flow on the wire went to one of these ports.
  case flowsOnlyTo(ports: [Int])
  /// Real-Tor lane, a replayed measurement: tor's furthest bootstrap step is exactly this
  /// progress and tag (`measured`: what the measurement recorded, for the report).
  case bootstrapStopsAt(progress: Int, tag: String, measured: String?)
  /// Real-Tor lane, a replayed measurement: probed from the device before the app starts,
  /// `reachable` of the class's nodes answer; with `failure`, every other one fails so
  /// (OONI's failure names). `measured`: what the measurement recorded, for the report.
  case reachability(
    targets: RealTorTargetClass, reachable: Int, failure: String?, measured: String?)

  public enum Transport: String, Sendable, CaseIterable {
    case tor, direct
  }

  public enum TextMatch: String, Sendable, CaseIterable {
    case equals, contains
  }

  /// The kind as written in scenario files.
  public var kind: String {
    switch self {
    case .noLeak: return "no-leak"
    case .leakCaught: return "leak-caught"
    case .requestsQueuedBeforeReady: return "requests-queued-before-ready"
    case .notification: return "notification"
    case .noNotification: return "no-notification"
    case .event: return "event"
    case .noEvent: return "no-event"
    case .requestSent: return "request-sent"
    case .proxyMode: return "proxy-mode"
    case .bootstrapSummary: return "bootstrap-summary"
    case .eventsInOrder: return "events-in-order"
    case .trafficOnlyToTor: return "traffic-only-to-tor"
    case .clearnetByUserChoice: return "clearnet-by-user-choice"
    case .bootstrapReaches: return "bootstrap-reaches"
    case .bootstrapStuck: return "bootstrap-stuck"
    case .bootstrapProblem: return "bootstrap-problem"
    case .bootstrapThroughBridge: return "bootstrap-through-bridge"
    case .flowsOnlyTo: return "flows-only-to"
    case .bootstrapStopsAt: return "bootstrap-stops-at"
    case .reachability: return "reachability"
    }
  }

  public static let kinds = [
    "no-leak", "leak-caught", "requests-queued-before-ready", "notification", "no-notification",
    "event", "no-event", "request-sent", "proxy-mode", "bootstrap-summary", "events-in-order",
    "traffic-only-to-tor",
    "clearnet-by-user-choice", "bootstrap-reaches", "bootstrap-stuck", "bootstrap-problem",
    "bootstrap-through-bridge", "flows-only-to", "bootstrap-stops-at", "reachability",
  ]

  /// Kinds judged from Debian's tor and the private network: real-Tor lane only.
  public static let realTorKinds = [
    "bootstrap-reaches", "bootstrap-stuck", "bootstrap-problem", "bootstrap-through-bridge",
    "flows-only-to", "bootstrap-stops-at", "reachability",
  ]

  /// A plain sentence for reports: "TorBootstrapDidStall posted by 75 s".
  public var sentence: String {
    switch self {
    case .noLeak: return "no leak"
    case .leakCaught(let classes):
      return "a \(classes.map(\.rawValue).joined(separator: ", ")) leak is caught"
    case .requestsQueuedBeforeReady:
      return "requests (messages, relay connects, held URLs) wait, none sent before Tor is ready"
    case .notification(let name, let by, let count):
      let times = count.map { " exactly \($0) time\($0 == 1 ? "" : "s")" } ?? ""
      return "\(name) posted\(times) by \(formatSeconds(by))"
    case .noNotification(let name, let before):
      return "\(name) not posted" + (before.map { " before \(formatSeconds($0))" } ?? "")
    case .event(let pattern, let by, let count):
      let times = count.map { " exactly \($0) time\($0 == 1 ? "" : "s")" } ?? ""
      return "\"\(pattern)\" seen\(times) by \(formatSeconds(by))"
    case .noEvent(let pattern, let before):
      return "no \"\(pattern)\"" + (before.map { " before \(formatSeconds($0))" } ?? "")
    case .requestSent(let transport, let by):
      return "an HTTP request or relay connection via \(transport.rawValue) by \(formatSeconds(by))"
    case .proxyMode(let mode, let at): return "proxy mode \(mode.rawValue) at \(formatSeconds(at))"
    case .bootstrapSummary(let text, let match, let at):
      let when = at.map { "at \(formatSeconds($0))" } ?? "at the end"
      return "bootstrap summary \(match == .equals ? "is" : "contains") \"\(text)\" \(when)"
    case .eventsInOrder(let events): return "events in order: " + events.joined(separator: " -> ")
    case .trafficOnlyToTor: return "traffic only to Tor"
    case .clearnetByUserChoice: return "clearnet by the user's choice, reported as exposure"
    case .bootstrapReaches(let progress):
      return "tor bootstraps to \(progress)%"
        + (progress >= 100 ? " and a fetch through the exit succeeds" : "")
    case .bootstrapStuck(let atMost, let tag):
      return "tor stays at \(atMost)% or below" + (tag.map { " (\($0))" } ?? "")
    case .bootstrapProblem(let reason): return "tor reports a bootstrap problem \(reason)"
    case .bootstrapThroughBridge: return "tor bootstraps through the pluggable transport"
    case .flowsOnlyTo(let ports):
      return "every flow goes to port " + ports.map(String.init).joined(separator: " or ")
    case .bootstrapStopsAt(let progress, let tag, let measured):
      return "tor's bootstrap stops at \(progress)% (\(tag))"
        + (measured.map { " as measured: \($0)" } ?? "")
    case .reachability(let targets, let reachable, let failure, let measured):
      return "\(reachable) of \(targets.nodes.count) \(targets.rawValue) reachable"
        + (failure.map { ", the others fail with \($0)" } ?? "")
        + (measured.map { " (measured: \($0))" } ?? "")
    }
  }
}

/// "75 s", "2.5 s": seconds for people.
public func formatSeconds(_ seconds: Double) -> String {
  if seconds.rounded() == seconds, abs(seconds) < 1e9 { return "\(Int(seconds)) s" }
  let text = String((seconds * 1000).rounded() / 1000)
  return text + " s"
}
