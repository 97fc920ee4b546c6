import FailClosedSupport
import Foundation

/// One tor started by the app, as its child (same process group, so whatever kills the app's
/// group kills tor too), with stdout and stderr in a file (the app's stdout is its event lines).
/// A dedicated thread waits for it and records how it ended; `terminate` is SIGTERM, then
/// SIGKILL after the grace period, then the reap.
final class DebianTorProcess: @unchecked Sendable {
  let pid: pid_t
  private let lock = NSLock()
  private var status: Int32?
  private let ended = DispatchSemaphore(value: 0)

  /// Starts `arguments[0]` (a path) with default signal dispositions and an empty mask,
  /// whatever the app ignores or blocks. `onExit` runs on the reaping thread with the status
  /// (128 + signal when killed).
  init(
    _ arguments: [String], outputPath: String,
    onExit: @escaping @Sendable (Int32) -> Void
  ) throws {
    let actions = FileActions()
    actions.open("/dev/null", to: 0, flags: O_RDONLY)
    actions.open(outputPath, to: 1, flags: O_WRONLY | O_CREAT | O_APPEND)
    actions.dup(1, to: 2)
    let pid = try Spawner.spawn(arguments, actions: actions)
    self.pid = pid
    BlockingIO.detach("failclosed.tor-reaper") { [self] in
      let code = Spawner.wait(pid)
      onExit(code)
      lock.withLock { status = code }
      ended.signal()
    }
  }

  var isRunning: Bool { lock.withLock { status == nil } }
  var exitStatus: Int32? { lock.withLock { status } }

  /// SIGTERM, SIGKILL after `grace` seconds, and wait for the reap. Blocking: call it from a
  /// dedicated thread. Returns the exit status.
  @discardableResult
  func terminate(grace: Double = 1) -> Int32 {
    if let status = exitStatus { return status }
    kill(pid, SIGTERM)
    if ended.wait(timeout: .now() + grace) == .timedOut {
      // Still unreaped, so the PID is still tor's.
      if isRunning { kill(pid, SIGKILL) }
      ended.wait()
    }
    // Let any other waiter through too.
    ended.signal()
    return exitStatus ?? -1
  }
}
