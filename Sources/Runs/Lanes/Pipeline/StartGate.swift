import Foundation

/// At most one run per core sets up at a time: namespaces, nftables, the capture, the Tor side
/// and the app's own start-up are the runs' CPU bursts, and 21 of bitchat's runs starting at
/// once kept two cores 98% busy for 4 s, which made the runs already going perform their
/// timed actions 0.46-0.53 s late (``ActionTiming``). A run holds the gate from its sandbox
/// until the app has written its first event (or ``releaseAfter`` real seconds).
public final class StartGate: @unchecked Sendable {
  public static let shared = StartGate(capacity: ProcessInfo.processInfo.activeProcessorCount)
  /// Real seconds after the app's launch at which a run lets the next one start even if the
  /// app has not spoken yet.
  static let releaseAfter = 3.0

  private let slots: DispatchSemaphore
  private let counter = NSCondition()
  private var left = 0

  init(capacity: Int) { slots = DispatchSemaphore(value: max(1, capacity)) }

  /// Blocks (a pipeline thread, never the cooperative pool) until a run may set up.
  func enter() { slots.wait() }

  func leave() {
    slots.signal()
    counter.lock()
    left += 1
    counter.broadcast()
    counter.unlock()
  }

  /// How many runs have passed their set-up so far (in this process).
  public var setUpCount: Int {
    counter.lock()
    defer { counter.unlock() }
    return left
  }

  /// Blocks until `count` runs in all have passed their set-up, or `timeout` real seconds (a
  /// lane whose network never started sets up no run): a batch that must not start while
  /// another's runs are still starting waits for them. Whether the count was reached.
  @discardableResult
  public func waitForSetUps(_ count: Int, timeout: Double) -> Bool {
    let deadline = Date(timeIntervalSinceNow: timeout)
    counter.lock()
    defer { counter.unlock() }
    while left < count {
      if !counter.wait(until: deadline) { return left >= count }
    }
    return true
  }

  /// One run's hold: left once, whichever path leaves first.
  final class Hold: @unchecked Sendable {
    private let gate: StartGate
    private let lock = NSLock()
    private var held = true

    init(_ gate: StartGate) {
      self.gate = gate
      gate.enter()
    }

    var isHeld: Bool { lock.withLock { held } }

    func release() {
      let leave: Bool = lock.withLock {
        defer { held = false }
        return held
      }
      if leave { gate.leave() }
    }
  }
}
