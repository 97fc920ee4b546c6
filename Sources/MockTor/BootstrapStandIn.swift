/// A stand-in for TorControl's bootstrap simulator until it lands: healthy after N seconds.
/// Same shape (a plan, a pure state(at:)), so the swap is local to this file.
public enum MockBootstrapPlan: Hashable, Sendable, CustomStringConvertible {
  case healthy(after: Double)

  public init(parsing text: String) throws(MockTorError) {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.first == "healthy", parts.count <= 2 else {
      throw MockTorError.badFault(
        spec: text, reason: "bootstrap plan: only healthy[:SECONDS] until the simulator lands")
    }
    guard parts.count == 2 else {
      self = .healthy(after: 5)
      return
    }
    guard let seconds = Double(parts[1]), seconds >= 0, seconds.isFinite else {
      throw MockTorError.badFault(spec: text, reason: "'\(parts[1])' is not a number of seconds")
    }
    self = .healthy(after: seconds)
  }

  public var description: String {
    switch self {
    case .healthy(let after): return "healthy:\(after)"
    }
  }
}

/// Where the simulated client is.
public struct MockBootstrapState: Hashable, Sendable {
  public var progress: Int
  public var tag: String
  public var summary: String
  public var isReady: Bool
  public var crashed: Bool
}

struct BootstrapStandIn: Sendable {
  let plan: MockBootstrapPlan
  let personality: MockTorPersonality

  func state(at time: Double) -> MockBootstrapState {
    switch plan {
    case .healthy(let after):
      if time >= after {
        return personality == .arti
          ? MockBootstrapState(
            progress: 100, tag: "done", summary: "Ready", isReady: true, crashed: false)
          : MockBootstrapState(
            progress: 100, tag: "done", summary: "Done", isReady: true, crashed: false)
      }
      return personality == .arti
        ? MockBootstrapState(
          progress: 0, tag: time > 0 ? "bootstrapping" : "starting",
          summary: time > 0 ? "Bootstrapping..." : "Starting...", isReady: false, crashed: false)
        : MockBootstrapState(
          progress: 0, tag: "starting", summary: "Starting", isReady: false, crashed: false)
    }
  }
}
