/// bitchat's relay reconnect backoff: 1 s doubling to at most 300 s, 10 attempts, each delay
/// times a jitter factor in [0.8, 1.2]; permanent failures cool down after 600 s.
public enum RelayBackoff {
  public static let initial = 1.0
  public static let maximum = 300.0
  public static let multiplier = 2.0
  public static let maxAttempts = 10
  public static let jitterRatio = 0.2
  public static let failureCooldown = 600.0
  public static let eoseFallback = 10.0
  public static let torReadyMaxWaitAttempts = 3
  public static let pendingSendQueueCap = 200

  /// The delay before reconnect attempt `attempt` (1-based), `jitterUnit` in [0, 1).
  public static func delay(attempt: Int, jitterUnit: Double) -> Double {
    var base = initial
    for _ in 0..<max(attempt - 1, 0) { base *= multiplier }
    base = min(base, maximum)
    return base * (1.0 + (jitterUnit * 2.0 - 1.0) * jitterRatio)
  }
}

/// A deterministic random source (SplitMix64) for the jitter, so runs repeat exactly.
public struct SeededRandom: Sendable {
  private var state: UInt64
  public init(seed: UInt64) { state = seed }
  /// A Double in [0, 1).
  public mutating func nextUnit() -> Double {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    z ^= z >> 31
    return Double(z >> 11) / Double(1 << 53)
  }
}
