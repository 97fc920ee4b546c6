/// How a run's event clock moved (the mock lane's default; `--no-skip-idle` runs a plain scaled
/// clock instead): each move with its real instant, so a packet's capture time maps onto the
/// run's axis (the time the clock read when it was sent), and the reports say how much virtual
/// time passed in jumps over idle time and how much ran at the scale while a real-time wait
/// held.
public struct ClockSkip: Sendable, Equatable {
  public struct Jump: Sendable, Equatable {
    /// When the move happened (Unix time, seconds).
    public var unixTime: Double
    /// The run's virtual seconds just before and just after it.
    public var before: Double
    public var after: Double
    /// A move at the scale while a process held (a wait the kernel times in real time), not a
    /// jump over idle time.
    public var held: Bool

    public init(unixTime: Double, before: Double, after: Double, held: Bool = false) {
      self.unixTime = unixTime
      self.before = before
      self.after = after
      self.held = held
    }
  }

  /// In the order they happened.
  public var jumps: [Jump]

  public init(jumps: [Jump]) { self.jumps = jumps }

  /// Virtual seconds jumped over idle time.
  public var skippedSeconds: Double {
    jumps.reduce(0) { $0 + ($1.held ? 0 : max(0, $1.after - $1.before)) }
  }

  /// Jumps over idle time.
  public var idleJumps: Int { jumps.filter { !$0.held }.count }

  /// Virtual seconds that ran at the scale while a process held.
  public var heldSeconds: Double {
    jumps.reduce(0) { $0 + ($1.held ? max(0, $1.after - $1.before) : 0) }
  }

  /// The run's virtual seconds at Unix time `unixTime`: what the clock read then (the time
  /// stands between moves; before the first it read the page's start, before time 0).
  public func virtualTime(at unixTime: Double) -> Double {
    var low = 0
    var high = jumps.count
    while low < high {
      let middle = (low + high) / 2
      if jumps[middle].unixTime <= unixTime { low = middle + 1 } else { high = middle }
    }
    return low == 0 ? (jumps.first?.before ?? 0) : jumps[low - 1].after
  }
}
