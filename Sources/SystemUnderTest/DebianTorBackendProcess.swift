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
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT] { sigaddset(&defaults, signal) }
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setsigmask(&attributes, &empty)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
    let argv = arguments.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var spawned: pid_t = 0
    let result = posix_spawn(&spawned, arguments[0], &actions, &attributes, argv, environ)
    guard result == 0 else { throw SystemError("posix_spawn(\(arguments[0]))", code: result) }
    let pid = spawned
    self.pid = pid
    BlockingIO.detach("failclosed.tor-reaper") { [self] in
      var raw: Int32 = 0
      var reaped = waitpid(pid, &raw, 0)
      while reaped < 0 && errno == EINTR { reaped = waitpid(pid, &raw, 0) }
      let code: Int32 =
        reaped < 0 ? -1 : (raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f))
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
