import Audit

/// What a scenario requires: one expectation, of one of the kinds in ``ExpectationKinds/all``
/// (each kind is its own unit: fields, parser, judge, sentence). The capture-based kinds are
/// judged from the audit; the others from the app's events and the bootstrap timeline.
public struct ScenarioExpectation: Sendable, Equatable {
  public let unit: any ExpectationUnit

  public init(_ unit: any ExpectationUnit) { self.unit = unit }

  /// The kind as written in scenario files.
  public var kind: String { type(of: unit).name }

  /// A plain sentence for reports: "TorBootstrapDidStall posted by 75 s".
  public var sentence: String { unit.sentence }

  /// The unit, when it is of `type`: `expectation.as(ScenarioExpectation.LeakCaught.self)`.
  public func `as`<Unit: ExpectationUnit>(_ type: Unit.Type) -> Unit? { unit as? Unit }

  public static func == (a: Self, b: Self) -> Bool { a.unit.isEqual(to: b.unit) }

  /// Every kind's name, as scenario files write it.
  public static var kinds: [String] { ExpectationKinds.all.map { $0.name } }

  /// Kinds judged from Debian's tor and the private network: real-Tor lane only.
  public static var realTorKinds: [String] {
    ExpectationKinds.all.filter { $0.realTorOnly }.map { $0.name }
  }

  public enum Transport: String, Sendable, CaseIterable {
    case tor, direct
  }

  public enum TextMatch: String, Sendable, CaseIterable {
    case equals, contains
  }
}

/// The units by the names code writes them: `.noLeak`, `.notification(name:by:count:)`.
extension ScenarioExpectation {
  public static var noLeak: Self { Self(NoLeak()) }
  public static func leakCaught(classes: [LeakClass]) -> Self {
    Self(LeakCaught(classes: classes))
  }
  public static var requestsQueuedBeforeReady: Self { Self(RequestsQueuedBeforeReady()) }
  public static func notification(name: String, by: Double, count: Int?) -> Self {
    Self(Notification(name: name, by: by, count: count))
  }
  public static func noNotification(name: String, before: Double?) -> Self {
    Self(NoNotification(name: name, before: before))
  }
  public static func event(_ pattern: String, by: Double, count: Int?) -> Self {
    Self(Event(pattern, by: by, count: count))
  }
  public static func noEvent(_ pattern: String, before: Double?) -> Self {
    Self(NoEvent(pattern, before: before))
  }
  public static func requestSent(transport: Transport, by: Double) -> Self {
    Self(RequestSent(transport: transport, by: by))
  }
  public static func proxyMode(_ mode: Transport, at: Double) -> Self {
    Self(ProxyMode(mode, at: at))
  }
  public static func bootstrapSummary(text: String, match: TextMatch, at: Double?) -> Self {
    Self(BootstrapSummary(text: text, match: match, at: at))
  }
  public static func eventsInOrder(_ events: [String]) -> Self { Self(EventsInOrder(events)) }
  public static var trafficOnlyToTor: Self { Self(TrafficOnlyToTor()) }
  public static var clearnetByUserChoice: Self { Self(ClearnetByUserChoice()) }
  public static func bootstrapReaches(progress: Int) -> Self {
    Self(BootstrapReaches(progress: progress))
  }
  public static func bootstrapStuck(atMost: Int, tag: String?) -> Self {
    Self(BootstrapStuck(atMost: atMost, tag: tag))
  }
  public static func bootstrapProblem(reason: String) -> Self {
    Self(BootstrapProblem(reason: reason))
  }
  public static var bootstrapThroughBridge: Self { Self(BootstrapThroughBridge()) }
  public static func flowsOnlyTo(ports: [Int]) -> Self { Self(FlowsOnlyTo(ports: ports)) }
  public static func bootstrapStopsAt(progress: Int, tag: String, measured: String?) -> Self {
    Self(BootstrapStopsAt(progress: progress, tag: tag, measured: measured))
  }
  public static func reachability(
    targets: RealTorTargetClass, reachable: Int, failure: String?, measured: String?
  ) -> Self {
    Self(Reachability(targets: targets, reachable: reachable, failure: failure, measured: measured))
  }
}

/// "75 s", "2.5 s": seconds for people.
public func formatSeconds(_ seconds: Double) -> String {
  if seconds.rounded() == seconds, abs(seconds) < 1e9 { return "\(Int(seconds)) s" }
  let text = String((seconds * 1000).rounded() / 1000)
  return text + " s"
}
