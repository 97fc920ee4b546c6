import Glibc

/// CLOCK_REALTIME minus CLOCK_MONOTONIC, in nanoseconds: what turns a monotonic instant into a
/// Unix time. It moves when someone sets the wall clock (an NTP step, `date -s`), which must not
/// move a run's timeline: the harness reads it once per process (``process``) and puts every
/// Unix time of a run on that one base (``MonotonicInstant/unixTime``); the capture follows its
/// changes to place the kernel's packet stamps (Capture's WallClockSteps).
public enum WallClockOffset {
  /// The offset now: the wall clock read on both sides of the monotonic one, averaged.
  public static func now() -> Int64 {
    var before = timespec()
    var monotonic = timespec()
    var after = timespec()
    clock_gettime(CLOCK_REALTIME, &before)
    clock_gettime(CLOCK_MONOTONIC, &monotonic)
    clock_gettime(CLOCK_REALTIME, &after)
    let real = (nanoseconds(before) + nanoseconds(after)) / 2
    return real - nanoseconds(monotonic)
  }

  /// The offset as this process first read it: the base of every Unix time it writes.
  public static let process: Int64 = now()

  static func nanoseconds(_ spec: timespec) -> Int64 {
    Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
  }
}
