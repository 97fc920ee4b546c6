/// What the mock's Tor client does while it bootstraps. The text spelling (``init(parsing:)`` and
/// ``description``) is the one place the CLI and scenario files read and write plans:
///
///     healthy[:SECONDS]             100% after SECONDS (default 5)
///     stall:TAG[:timeout|refused]   walk up to phase TAG and stay there (failure: none)
///     stall:TAG[:FAILURE]:SECONDS   the same stall, lifted at SECONDS: then on to 100%
///     never                         stay at 0% "starting"
///     flap:SECONDS                  bootstrap in SECONDS, then lose and regain the network
///                                   every SECONDS
///     crash:SECONDS                 bootstrap like healthy:5, die at SECONDS
public enum BootstrapPlan: Hashable, Sendable, CustomStringConvertible {
  case healthy(after: Double)
  case stalled(atTag: String, failure: StallFailure)
  /// A stall that ends: stuck at `atTag` until `until`, then the rest of the phases to 100%
  /// (as when a censor's window closes and tor's next connection attempt gets through).
  case recovering(atTag: String, failure: StallFailure, until: Double)
  case neverStarting
  case flapping(period: Double)
  case crash(after: Double)

  /// Why a stalled bootstrap does not advance, in the words tor uses in its WARN BOOTSTRAP
  /// events (see reference/private-tor-net.md for what each looks like against real tor).
  public enum StallFailure: String, Hashable, Sendable, CaseIterable {
    /// Packets to relays are dropped: "Connection timed out; TIMEOUT", late and slow.
    case timeout
    /// Relays answer with RST: "Connection refused; CONNECTREFUSED", early and fast.
    case connectRefused = "refused"
    /// Stuck without complaint (e.g. a DPI box that drops the TLS handshake).
    case none
  }

  /// Seconds a healthy bootstrap takes when the plan does not say (`healthy`, `crash:N`).
  public static let defaultHealthySeconds = 5.0

  public var description: String {
    switch self {
    case .healthy(let after): return "healthy:\(BootstrapPlan.format(after))"
    case .stalled(let tag, .none): return "stall:\(tag)"
    case .stalled(let tag, let failure): return "stall:\(tag):\(failure.rawValue)"
    case .recovering(let tag, .none, let until):
      return "stall:\(tag):\(BootstrapPlan.format(until))"
    case .recovering(let tag, let failure, let until):
      return "stall:\(tag):\(failure.rawValue):\(BootstrapPlan.format(until))"
    case .neverStarting: return "never"
    case .flapping(let period): return "flap:\(BootstrapPlan.format(period))"
    case .crash(let after): return "crash:\(BootstrapPlan.format(after))"
    }
  }

  /// Parses the text spelling; errors name the part at fault.
  public init(parsing text: String) throws(BootstrapPlanError) {
    var parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
    func seconds(_ index: Int, default fallback: Double?) throws(BootstrapPlanError) -> Double {
      guard index < parts.count else {
        guard let fallback else {
          throw BootstrapPlanError(text: text, part: nil, reason: "missing SECONDS")
        }
        return fallback
      }
      guard let value = Double(parts[index]), value.isFinite, value >= 0 else {
        throw BootstrapPlanError(
          text: text, part: parts[index], reason: "not a number of seconds (e.g. 5 or 0.5)")
      }
      return value
    }
    func noExtra(after count: Int) throws(BootstrapPlanError) {
      if parts.count > count {
        throw BootstrapPlanError(text: text, part: parts[count], reason: "unexpected extra part")
      }
    }
    switch parts[0].lowercased() {
    case "healthy":
      try noExtra(after: 2)
      self = .healthy(after: try seconds(1, default: BootstrapPlan.defaultHealthySeconds))
    case "stall", "stalled":
      // The last part may be the time the stall ends: stall:conn:30, stall:conn:timeout:30.
      var recoversAt: Double?
      if parts.count > 2, let last = parts.last, last.first?.isNumber == true {
        guard let value = Double(last), value.isFinite, value > 0 else {
          throw BootstrapPlanError(
            text: text, part: last, reason: "not a number of seconds above 0 (when the stall ends)")
        }
        recoversAt = value
        parts.removeLast()
      }
      try noExtra(after: 3)
      guard parts.count > 1, !parts[1].isEmpty else {
        throw BootstrapPlanError(text: text, part: nil, reason: "missing phase TAG")
      }
      guard BootstrapPhase.named(parts[1]) != nil else {
        let known = BootstrapPhase.all.map(\.tag).joined(separator: ", ")
        throw BootstrapPlanError(
          text: text, part: parts[1], reason: "unknown bootstrap phase tag (known: \(known))")
      }
      var failure = StallFailure.none
      if parts.count > 2 {
        switch parts[2].lowercased() {
        case "timeout", "drop", "dropped": failure = .timeout
        case "refused", "connectrefused", "reset": failure = .connectRefused
        case "none": failure = .none
        default:
          throw BootstrapPlanError(
            text: text, part: parts[2], reason: "unknown failure (use timeout, refused or none)")
        }
      }
      if let recoversAt {
        self = .recovering(atTag: parts[1], failure: failure, until: recoversAt)
      } else {
        self = .stalled(atTag: parts[1], failure: failure)
      }
    case "never":
      try noExtra(after: 1)
      self = .neverStarting
    case "flap", "flapping":
      try noExtra(after: 2)
      let period = try seconds(1, default: nil)
      guard period > 0 else {
        throw BootstrapPlanError(text: text, part: parts[1], reason: "period must be positive")
      }
      self = .flapping(period: period)
    case "crash":
      try noExtra(after: 2)
      self = .crash(after: try seconds(1, default: nil))
    default:
      throw BootstrapPlanError(
        text: text, part: parts[0], reason: "unknown plan (use healthy, stall, never, flap, crash)")
    }
  }

  public static func format(_ seconds: Double) -> String {
    seconds == seconds.rounded() && abs(seconds) < 1e15 ? String(Int(seconds)) : String(seconds)
  }
}

/// A bootstrap plan spelling that could not be read.
public struct BootstrapPlanError: Error, Hashable, Sendable, CustomStringConvertible {
  public let text: String
  /// The colon-separated part at fault, nil when a part is missing.
  public let part: String?
  public let reason: String

  public var description: String {
    if let part {
      return "bootstrap plan \"\(text)\": \"\(part)\": \(reason)"
    }
    return "bootstrap plan \"\(text)\": \(reason)"
  }
}
