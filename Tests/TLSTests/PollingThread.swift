import Foundation

/// A thread that names itself (``enter()``, called on it) so a test can ask the kernel whether
/// it is asleep in poll(2): the event "a reader is blocked" itself, instead of a guessed delay.
final class PollingThread: @unchecked Sendable {
  private let lock = NSLock()
  private var directory: String?

  /// Called on the thread: records its /proc directory (/proc/thread-self, resolved there).
  func enter() {
    let own = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")
    lock.withLock { directory = own.map { "/proc/" + $0 } }
  }

  /// The kernel has the thread asleep in poll(2) (its wchan names the function a sleeping
  /// thread waits in: poll_schedule_timeout on Linux 6).
  var isAsleepInPoll: Bool {
    guard let directory = lock.withLock({ directory }),
      let wchan = try? String(contentsOfFile: directory + "/wchan", encoding: .utf8)
    else { return false }
    return wchan.contains("poll")
  }
}
