import Foundation

/// Ends a child the harness started (the mock Tor, the app, the program launcher) once the
/// harness is gone, however it went (a crash, SIGKILL), instead of living on with its ports and
/// its namespace. The harness names itself in the child's environment (``Spawner`` sets
/// FAILCLOSED_PARENT_PID to its own pid); the child watches that process from a thread.
///
/// Not PR_SET_PDEATHSIG: it fires when the spawning *thread* ends, and the harness spawns these
/// long-lived children from threads that end (``BlockingIO``); ``Spawner`` sets it only for a
/// command the calling thread waits for (``Spawner/capture(_:stdin:currentDirectory:)``). A
/// pid handed over, not getppid() read at start, closes the race of a parent that died before
/// the child looked. Without the variable (a user's own `failclosed mock-tor`, under nohup or not),
/// nothing is watched.
public enum ParentDeathWatch {
  public static let environmentName = "FAILCLOSED_PARENT_PID"

  /// How often the watcher looks: a child outlives its harness by this much, and its own stop.
  public static let interval = 0.2

  /// The entry that names this process as the parent, for a child's environment.
  public static var environmentEntry: String { "\(environmentName)=\(getpid())" }

  /// This process's environment for a child: the parent named is this process.
  public static func childEnvironment() -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment[environmentName] = String(getpid())
    return environment
  }

  /// Starts the watch when `environment` names a parent; once that process is gone, `onGone`
  /// runs once, on the watcher's thread (by default, ``terminateThisProcess``). Returns the
  /// parent watched, nil when none is named.
  @discardableResult
  public static func start(
    environment: [String: String] = ProcessInfo.processInfo.environment,
    onGone: @escaping @Sendable () -> Void = { terminateThisProcess() }
  ) -> pid_t? {
    guard let text = environment[environmentName], let parent = pid_t(text), parent > 1 else {
      return nil
    }
    // Started by it directly (the usual case): re-parenting tells at once that it exited,
    // before anyone reaps it.
    let direct = getppid() == parent
    BlockingIO.detach("failclosed.parent-watch") {
      while !isGone(parent, direct: direct) { usleep(UInt32(interval * 1_000_000)) }
      onGone()
    }
    return parent
  }

  /// Whether `pid` has exited: this process was re-parented away from it (when it was the
  /// parent), or it no longer exists, or it is a zombie waiting to be reaped.
  public static func isGone(_ pid: pid_t, direct: Bool = false) -> Bool {
    if direct && getppid() != pid { return true }
    if kill(pid, 0) != 0 && errno == ESRCH { return true }
    return isZombie(pid)
  }

  /// State Z or X in /proc/PID/stat (after the command name's closing parenthesis).
  static func isZombie(_ pid: pid_t) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")")
    else { return false }
    let state = stat[stat.index(after: close)...].drop { $0 == " " }.first
    return state == "Z" || state == "X"
  }

  /// SIGTERM to this process, the stop Ctrl-C makes (the mock stops its listeners, the
  /// launcher kills its program's group); if that has not ended it in 5 s, exit: nobody is
  /// left to wait for a clean end.
  public static func terminateThisProcess() {
    kill(getpid(), SIGTERM)
    usleep(5_000_000)
    _exit(128 + SIGTERM)
  }
}
