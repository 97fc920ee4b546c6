import Foundation

/// Ends the driver when bitchat's main thread stops answering: a deadlock there (bitchat's own
/// launch between a136b5b7 and fdf28aa5 waits on itself in two `static let shared` inits; on
/// Linux a recursive `swift_once` hangs where Apple's traps) would otherwise hold the run to
/// its deadline with no word of why. A thread of its own asks the main queue to answer every
/// second; after `limit` seconds without an answer it writes an `error` event naming the last
/// action begun and exits with status 3, which the lane reports as the run's error.
final class MainThreadWatchdog: @unchecked Sendable {
  static let shared = MainThreadWatchdog()
  static let exitStatus: Int32 = 3
  private let lock = NSLock()
  /// Monotonic seconds (a step of the wall clock is no hang).
  private var answered = ProcessInfo.processInfo.systemUptime
  private var lastAction = "launch"
  let limit: TimeInterval = 30

  func began(_ action: String) { lock.withLock { lastAction = action } }

  func start() {
    let thread = Thread { [self] in
      var tick = ProcessInfo.processInfo.systemUptime
      while true {
        Thread.sleep(forTimeInterval: 1)
        let now = ProcessInfo.processInfo.systemUptime
        // The watchdog itself did not run (the process was stopped, the machine suspended):
        // the main thread had no chance to answer either.
        if now - tick > 5 { lock.withLock { answered = now } }
        tick = now
        DispatchQueue.main.async {
          self.lock.withLock { self.answered = ProcessInfo.processInfo.systemUptime }
        }
        let (silent, action) = lock.withLock { (now - answered, lastAction) }
        guard silent > limit else { continue }
        let message = "bitchat's main thread hung for \(Int(silent)) s during '\(action)'"
        EventStream.shared.record("error", ["message": message])
        FileHandle.standardError.write(Data((message + "\n").utf8))
        _exit(Self.exitStatus)
      }
    }
    thread.name = "failclosed.watchdog"
    thread.start()
  }
}
