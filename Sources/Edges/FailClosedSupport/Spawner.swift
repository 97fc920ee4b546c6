import CSpawn
import Foundation

/// What a spawned child does to its descriptors and directory before it execs, in order.
public final class FileActions {
  enum Action {
    case open(path: String, target: Int32, flags: Int32)
    case dup(fd: Int32, target: Int32)
    case changeDirectory(String)
  }

  private(set) var actions: [Action] = []

  public init() {}

  public func dup(_ fd: Int32, to target: Int32) {
    actions.append(.dup(fd: fd, target: target))
  }

  public func dup(_ descriptor: FileDescriptor, to target: Int32) {
    dup(descriptor.rawValue, to: target)
  }

  public func open(_ path: String, to target: Int32, flags: Int32) {
    actions.append(.open(path: path, target: target, flags: flags))
  }

  /// The child starts in `directory` (a failure to enter it is the spawn's error).
  public func changeDirectory(_ directory: String) throws {
    actions.append(.changeDirectory(directory))
  }
}

/// What a finished child printed, and how it ended.
public struct SpawnedOutput: Sendable {
  /// The exit status (128 + signal when killed).
  public let status: Int32
  public let stdout: String
  public let stderr: String
}

/// Spawning and waitpid, wrapped once for every child the harness starts: Foundation's
/// Process cannot put a child in its own process group, which teardown needs to kill a whole
/// tree, and a child it starts from a dispatch worker inherits that thread's mask, which blocks
/// every signal (a tor started so ignores SIGTERM). A child that inherits the environment is
/// told who started it (``ParentDeathWatch``), so the mock Tor, the app and the program
/// launcher end when this process dies.
///
/// Not glibc's posix_spawn (CSpawn's fc_spawn, a vfork like it): a child whose harness is
/// killed between its fork and its exec (on a loaded machine that window lasts up to ~100 ms;
/// measured: 23 of 150 SIGKILLs of `exec` during its set-up caught a child in it) would exec
/// its program afterwards, unowned: an `ip netns add` that ran after the next run's reaper had
/// looked left a namespace nobody removes. Here a child never execs once its parent is gone,
/// and a command the harness waits for (``capture(_:stdin:currentDirectory:)``) dies with it.
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

  /// Starts `arguments` (the first looked up in ``searchPath``) with default signal
  /// dispositions and an empty mask, whatever the harness ignores or blocks (SIGPIPE, SIGINT,
  /// SIGTERM while a signal source is armed). The child execs only if this process is still
  /// alive (see ``Spawner``).
  ///
  /// `diesWithCallingThread`: the child gets SIGKILL when the calling thread ends
  /// (PR_SET_PDEATHSIG), the process's death included, from before its exec to its end. Only
  /// for a child the calling thread waits for: a thread that ends first (a ``BlockingIO``
  /// worker) would kill it. Long-lived children (the mock Tor, the app, tor, a testnet's
  /// watcher, which outlives `testnet up` on purpose) have their own ends.
  public static func spawn(
    _ arguments: [String], actions: FileActions, newProcessGroup: Bool = false,
    environment: [String]? = nil, diesWithCallingThread: Bool = false
  ) throws -> pid_t {
    try spawn(
      arguments, actions: actions, newProcessGroup: newProcessGroup, environment: environment,
      diesWithCallingThread: diesWithCallingThread, parent: getpid())
  }

  /// ``spawn(_:actions:newProcessGroup:environment:diesWithCallingThread:)`` with the parent
  /// the child must still have at its exec (tests name another, as if this one had died).
  static func spawn(
    _ arguments: [String], actions: FileActions, newProcessGroup: Bool,
    environment: [String]?, diesWithCallingThread: Bool, parent: pid_t
  ) throws -> pid_t {
    guard let program = arguments.first else { throw SystemError("spawn", code: EINVAL) }
    let path = resolve(program)
    let argv = arguments.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    let env =
      (environment
      ?? ParentDeathWatch.childEnvironment().map { "\($0.key)=\($0.value)" })
      .map { strdup($0) } + [nil]
    defer { for pointer in env { free(pointer) } }
    // The actions' paths, alive until the child has exec'd (fc_spawn returns after that).
    var paths: [UnsafeMutablePointer<CChar>?] = []
    defer { for pointer in paths { free(pointer) } }
    let steps = actions.actions.map { action -> fc_spawn_action in
      switch action {
      case .open(let file, let target, let flags):
        paths.append(strdup(file))
        return fc_spawn_action(
          kind: FC_SPAWN_OPEN, fd: -1, target: target, flags: flags, path: paths.last!)
      case .dup(let fd, let target):
        return fc_spawn_action(kind: FC_SPAWN_DUP2, fd: fd, target: target, flags: 0, path: nil)
      case .changeDirectory(let directory):
        paths.append(strdup(directory))
        return fc_spawn_action(
          kind: FC_SPAWN_CHDIR, fd: -1, target: -1, flags: 0, path: paths.last!)
      }
    }
    var pid: pid_t = 0
    let result = steps.withUnsafeBufferPointer { buffer in
      fc_spawn(
        &pid, path, argv, env, buffer.baseAddress, buffer.count, newProcessGroup ? 1 : 0,
        diesWithCallingThread ? SIGKILL : 0, parent)
    }
    guard result == 0 else { throw SystemError("spawn(\(path))", code: result) }
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

  /// Runs `arguments` to completion, blocking the calling thread (a dedicated one, see
  /// ``BlockingIO``), and returns what it printed on stdout and stderr, whatever its exit
  /// status. `stdin` is written to the child's standard input, then closed. The command dies
  /// with this process (SIGKILL, however the process ends): an `ip` or `nft` never acts for a
  /// harness that is gone.
  public static func capture(
    _ arguments: [String], stdin: String? = nil, currentDirectory: String? = nil
  ) throws -> SpawnedOutput {
    let input = try FileDescriptor.pipe()
    let output = try FileDescriptor.pipe()
    let errors = try FileDescriptor.pipe()
    let actions = FileActions()
    actions.dup(input.read, to: 0)
    actions.dup(output.write, to: 1)
    actions.dup(errors.write, to: 2)
    if let currentDirectory { try actions.changeDirectory(currentDirectory) }
    // This thread waits for the command: it dies with the harness, before or after its exec.
    let pid = try spawn(arguments, actions: actions, diesWithCallingThread: true)
    // The child holds its own copies; ours must go for end of file to reach the readers.
    input.read.close()
    output.write.close()
    errors.write.close()
    if let stdin { try? input.write.write(Array(stdin.utf8)) }
    input.write.close()
    let (out, err) = drain(output.read, errors.read)
    return SpawnedOutput(
      status: wait(pid), stdout: String(decoding: out, as: UTF8.self),
      stderr: String(decoding: err, as: UTF8.self))
  }

  /// Reads two pipes to end of file without letting either fill up.
  private static func drain(_ a: FileDescriptor, _ b: FileDescriptor) -> ([UInt8], [UInt8]) {
    var buffers: [[UInt8]] = [[], []]
    let open = [a, b]
    var chunk = [UInt8](repeating: 0, count: 16384)
    // Bounded: a command that prints forever is cut off after 64 MiB.
    while open.contains(where: \.isOpen), buffers[0].count + buffers[1].count < 64 << 20 {
      let entries = open.map { ($0, $0.isOpen ? PollEvents.readable : []) }
      guard let ready = try? FileDescriptor.poll(entries, timeout: 30),
        ready.contains(where: { !$0.isEmpty })
      else { break }
      for index in 0..<2 where open[index].isOpen && !ready[index].isEmpty {
        let n = (try? open[index].read(into: &chunk)) ?? 0
        if n > 0 {
          buffers[index] += chunk.prefix(n)
        } else {
          open[index].close()
        }
      }
    }
    a.close()
    b.close()
    return (buffers[0], buffers[1])
  }
}
