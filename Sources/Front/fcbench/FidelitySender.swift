import Glibc

/// What the capture-fidelity benchmark needs of a load generator: send for a time at a rate
/// (or flat out) and say how many packets left.
protocol FidelitySender: Sendable {
  /// How it sends, for the report.
  var name: String { get }
  var threads: Int { get }
  /// Sends for `seconds` at `rate` packets per second in all; nil sends as fast as it can.
  /// Blocks until every sending thread is done.
  func send(rate: Double?, seconds: Double) -> SendOutcome
}

struct SendOutcome: Sendable {
  var sent = 0
  var failed = 0
  var seconds = 0.0
  /// CPU seconds the sending threads ran, the kernel's work in their system calls included
  /// (for a veth, the peer's receive and the packet taps' copies run there too).
  var cpuSeconds = 0.0

  /// The threads' outcomes as one: counts and CPU add up, the time is the longest thread's.
  static func combined(_ all: [SendOutcome]) -> SendOutcome {
    SendOutcome(
      sent: all.map(\.sent).reduce(0, +), failed: all.map(\.failed).reduce(0, +),
      seconds: all.map(\.seconds).max() ?? 0, cpuSeconds: all.map(\.cpuSeconds).reduce(0, +))
  }

  /// The calling thread's CPU time so far.
  static func threadCPUSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
  }
}
