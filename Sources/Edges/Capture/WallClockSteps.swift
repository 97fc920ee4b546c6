/// Puts the kernel's packet stamps (CLOCK_REALTIME) on the harness's steady timeline (the
/// process's wall-clock base, ``WallClockOffset/process``): a wall clock set during a capture
/// (an NTP step, `date -s`) would otherwise move every later packet by the step, and a leak
/// after a step back would seem to come before the run, where a window of the user's own choice
/// could take it. Pure: the capture loop hands it the offset and the monotonic time of each turn.
///
/// A packet is stamped when it arrives and read a little later, so around a step it may carry
/// either offset. Of the monotonic times the recent offsets give it, the right one is the
/// latest that is not after the turn that read it: the other lies the step's size away, in the
/// future (a step back read late) or further in the past.
struct WallClockSteps {
  /// One change of the offset seen between two turns.
  struct Step: Equatable {
    /// Monotonic nanoseconds of the turn that saw it.
    var monotonic: Int64
    /// How far the wall clock moved (negative: back).
    var nanoseconds: Int64
  }

  /// A change smaller than this is NTP's slewing or the reading's noise, not a step.
  static let threshold: Int64 = 50_000_000
  /// A packet read by a turn may have arrived while the turn read the ring.
  static let slack: Int64 = 20_000_000
  /// Offsets kept: a packet left in the ring across a few turns still finds its own.
  static let kept = 4

  let base: Int64
  private(set) var offsets: [Int64]
  private(set) var monotonic: Int64
  private(set) var steps: [Step] = []

  init(base: Int64, offset: Int64, monotonic: Int64) {
    self.base = base
    offsets = [offset]
    self.monotonic = monotonic
  }

  /// A turn of the capture loop, before it reads the ring.
  mutating func turn(offset: Int64, monotonic: Int64) {
    self.monotonic = monotonic
    guard let last = offsets.last else { return }
    if abs(offset - last) < Self.threshold {
      offsets[offsets.count - 1] = offset
      return
    }
    steps.append(Step(monotonic: monotonic, nanoseconds: offset - last))
    offsets.append(offset)
    if offsets.count > Self.kept { offsets.removeFirst() }
  }

  /// `stamp` (CLOCK_REALTIME nanoseconds) on the steady timeline.
  /// Called for every packet: no allocation, one subtraction while the clock was never set.
  func steady(_ stamp: Int64) -> Int64 {
    if offsets.count == 1 { return stamp - offsets[0] + base }
    let limit = monotonic + Self.slack
    var best: Int64?
    var earliest = Int64.max
    for offset in offsets {
      let candidate = stamp - offset
      earliest = min(earliest, candidate)
      if candidate <= limit, candidate > (best ?? .min) { best = candidate }
    }
    return (best ?? earliest) + base
  }
}
