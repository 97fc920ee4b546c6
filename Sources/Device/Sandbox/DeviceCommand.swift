import FailClosedSupport
import Foundation

/// A command run inside the device namespace (`ip netns exec`, which also bind-mounts the
/// run's resolv.conf), in a process group of its own, and its whole process tree: every
/// process left in the device namespace counts, so a child that daemonises (new session,
/// re-parented to init) is still waited for and, at the end, killed.
public final class DeviceCommand: @unchecked Sendable {
  public let arguments: [String]
  public let pid: pid_t
  private let run: SandboxRun
  private let inode: UInt64

  /// Starts `arguments` in the device. `output`, when given, receives stdout and stderr
  /// (appended); otherwise they are the harness's own. `input` is its standard input (a
  /// descriptor the caller keeps and closes; /dev/null when nil).
  public init(
    _ arguments: [String], in run: SandboxRun, output: String? = nil, input: Int32? = nil
  ) throws {
    guard !arguments.isEmpty else { throw SystemError("exec: no command", code: EINVAL) }
    self.arguments = arguments
    self.run = run
    inode = try run.device.inode()
    let actions = FileActions()
    if let input {
      actions.dup(input, to: 0)
    } else {
      actions.open("/dev/null", to: 0, flags: O_RDONLY)
    }
    if let output {
      actions.open(output, to: 1, flags: O_WRONLY | O_CREAT | O_APPEND)
      actions.dup(1, to: 2)
    }
    pid = try Spawner.spawn(
      ["ip", "netns", "exec", run.names.device] + arguments, actions: actions,
      newProcessGroup: true)
    run.recordProcess(pid, group: true)
  }

  /// Waits until the command has exited and no process is left in the device namespace, for
  /// at most `timeout` seconds. Returns the command's exit status (nil if it did not exit)
  /// and whether the tree finished in time.
  public func waitForTree(timeout: Double) -> (status: Int32?, finished: Bool) {
    let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, timeout) * 1e9)
    var status: Int32?
    while DispatchTime.now().uptimeNanoseconds < deadline {
      if status == nil { status = Spawner.poll(pid) }
      if status != nil && processesInDevice().isEmpty { return (status, true) }
      usleep(20_000)
    }
    return (status, false)
  }

  /// Processes currently in the device namespace (the command's tree and anything it left),
  /// less the run's own services there (a real tor started for `exec --tor real`), which the
  /// run stops itself.
  public func processesInDevice() -> [pid_t] {
    let services = run.recordedProcesses().subtracting([pid])
    return NetworkNamespace.processes(inNamespaceInode: inode).filter {
      $0 != getpid() && !services.contains($0)
    }
  }

  /// Kills the command's group and everything left in the device namespace.
  public func killTree() {
    ProcessKiller.kill(pid, group: true)
    for _ in 0..<50 {
      let left = processesInDevice()
      if left.isEmpty { return }
      for process in left { kill(process, SIGKILL) }
      usleep(10_000)
    }
  }
}
