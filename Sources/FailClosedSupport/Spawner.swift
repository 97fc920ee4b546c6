import Foundation

/// posix_spawn file actions, freed on deinit.
public final class FileActions {
  var raw = posix_spawn_file_actions_t()

  public init() { posix_spawn_file_actions_init(&raw) }

  deinit { posix_spawn_file_actions_destroy(&raw) }

  public func dup(_ fd: Int32, to target: Int32) {
    posix_spawn_file_actions_adddup2(&raw, fd, target)
  }

  public func open(_ path: String, to target: Int32, flags: Int32) {
    posix_spawn_file_actions_addopen(&raw, target, path, flags, 0o644)
  }
}

/// posix_spawn and waitpid, wrapped once for every child the harness starts: Foundation's
/// Process cannot put a child in its own process group, which teardown needs to kill a whole
/// tree, and a child it starts from a dispatch worker inherits that thread's mask, which blocks
/// every signal (a tor started so ignores SIGTERM).
public enum Spawner {
  static let searchPath = ["/usr/sbin", "/sbin", "/usr/bin", "/bin", "/usr/local/bin"]

  public static func resolve(_ program: String) -> String {
    if program.contains("/") { return program }
    for directory in searchPath {
      let candidate = directory + "/" + program
      if access(candidate, X_OK) == 0 { return candidate }
    }
    return program
  }

  public static func spawn(
    _ arguments: [String], actions: FileActions, newProcessGroup: Bool = false,
    environment: [String]? = nil
  ) throws -> pid_t {
    guard let program = arguments.first else { throw SystemError("posix_spawn", code: EINVAL) }
    let path = resolve(program)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    // Children start with default signal dispositions and an empty mask, whatever the
    // harness ignores or blocks (SIGPIPE, SIGINT, SIGTERM while a signal source is armed).
    var defaults = sigset_t()
    sigemptyset(&defaults)
    for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT] { sigaddset(&defaults, signal) }
    var empty = sigset_t()
    sigemptyset(&empty)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setsigmask(&attributes, &empty)
    var flags = Int32(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
    if newProcessGroup {
      flags |= Int32(POSIX_SPAWN_SETPGROUP)
      posix_spawnattr_setpgroup(&attributes, 0)
    }
    posix_spawnattr_setflags(&attributes, Int16(flags))
    let argv = arguments.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    let env =
      (environment ?? ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" })
      .map { strdup($0) } + [nil]
    defer { for pointer in env { free(pointer) } }
    var pid: pid_t = 0
    let result = posix_spawn(&pid, path, &actions.raw, &attributes, argv, env)
    guard result == 0 else { throw SystemError("posix_spawn(\(path))", code: result) }
    return pid
  }

  /// Waits for `pid` and returns its exit status (128 + signal when killed).
  public static func wait(_ pid: pid_t) -> Int32 {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
      if errno != EINTR { return -1 }
    }
    return decode(status)
  }

  /// Reaps `pid` if it has exited; nil while it runs.
  public static func poll(_ pid: pid_t) -> Int32? {
    var status: Int32 = 0
    let result = waitpid(pid, &status, WNOHANG)
    if result == 0 { return nil }
    if result < 0 { return -1 }
    return decode(status)
  }

  public static func decode(_ status: Int32) -> Int32 {
    let signal = status & 0x7f
    if signal == 0 { return (status >> 8) & 0xff }
    return 128 + signal
  }
}
