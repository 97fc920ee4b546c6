/// The idle time a run's skipping clock jumped (the mock lane's default is a scaled clock that
/// skips; `--no-skip-idle` turns it off): each jump with its real instant, so a packet's
/// capture time maps onto the run's axis through the jumps before it, and the reports say how
/// much virtual time was skipped, in how many jumps.
public struct ClockSkip: Sendable, Equatable {
  public struct Jump: Sendable, Equatable {
    /// When the jump happened (Unix time, seconds).
    public var unixTime: Double
    /// The run's virtual seconds just before and just after it.
    public var before: Double
    public var after: Double

    public init(unixTime: Double, before: Double, after: Double) {
      self.unixTime = unixTime
      self.before = before
      self.after = after
    }
  }

  /// In the order they happened.
  public var jumps: [Jump]

  public init(jumps: [Jump]) { self.jumps = jumps }

  /// Virtual seconds skipped in all.
  public var skippedSeconds: Double { jumps.reduce(0) { $0 + max(0, $1.after - $1.before) } }

  /// Virtual seconds skipped by Unix time `unixTime` (every jump at or before it).
  public func skipped(by unixTime: Double) -> Double {
    jumps.reduce(0) { $0 + ($1.unixTime <= unixTime ? max(0, $1.after - $1.before) : 0) }
  }
}
