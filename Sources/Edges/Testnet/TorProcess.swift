import FailClosedSupport
import Foundation

/// One running tor (or any long-lived program), known by PID so it can be stopped on every exit
/// path, including from a different harness process (`failclosed testnet down`).
public final class TorProcess: @unchecked Sendable {
  public let name: String
  public let pid: Int32
  /// Whether this harness process is the parent (and so reaps it); false for an adopted PID.
  private let isChild: Bool
  private let lock = NSLock()
  private var status: Int32?

  /// Starts `arguments` behind `prefix` (e.g. `ip netns exec NS`, which execs in place, so the
  /// PID is the program's own), with default signal dispositions and an empty signal mask
  /// (``Spawner``), so SIGTERM stops it at once.
  public init(name: String, arguments: [String], prefix: [String] = [], logFile: String? = nil)
    throws
  {
    let actions = FileActions()
    actions.open("/dev/null", to: 0, flags: O_RDONLY)
    if let logFile {
      actions.open(logFile, to: 1, flags: O_WRONLY | O_CREAT | O_TRUNC)
      actions.dup(1, to: 2)
    } else {
      actions.open("/dev/null", to: 1, flags: O_WRONLY)
      actions.open("/dev/null", to: 2, flags: O_WRONLY)
    }
    self.name = name
    self.pid = try Spawner.spawn(prefix + arguments, actions: actions)
    self.isChild = true
  }

  /// Adopts a PID recorded by an earlier harness process.
  public init(name: String, adoptingPID pid: Int32) {
    self.name = name
    self.pid = pid
    self.isChild = false
  }

  public var isRunning: Bool {
    guard isChild else { return kill(pid, 0) == 0 && !TorProcess.isZombie(pid) }
    return lock.withLock {
      if status == nil { status = Spawner.poll(pid) }
      return status == nil
    }
  }

  public var exitStatus: Int32? {
    guard isChild else { return nil }
    return lock.withLock {
      if status == nil { status = Spawner.poll(pid) }
      return status
    }
  }

  static func isZombie(_ pid: Int32) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")")
    else { return true }
    return stat[stat.index(close, offsetBy: 2)] == "Z"
  }

  /// SIGTERM, then SIGKILL after `grace` seconds. Blocking: call from a dedicated thread or at
  /// teardown.
  public func stop(grace: Double = 1) {
    guard isRunning else { return }
    kill(pid, SIGTERM)
    let deadline = Date().addingTimeInterval(grace)
    while isRunning && Date() < deadline { usleep(20_000) }
    if isRunning { kill(pid, SIGKILL) }
    if isChild {
      lock.withLock { if status == nil { status = Spawner.wait(pid) } }
    } else {
      // Not our child: its new parent reaps it, or it stays a zombie (gone all the same).
      var waited = 0
      while kill(pid, 0) == 0 && !TorProcess.isZombie(pid) && waited < 100 {
        usleep(20_000)
        waited += 1
      }
    }
  }
}
