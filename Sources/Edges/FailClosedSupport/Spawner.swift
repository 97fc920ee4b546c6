import Foundation

/// posix_spawn file actions, freed on deinit.
public final class FileActions {
  var raw = posix_spawn_file_actions_t()

  public init() { posix_spawn_file_actions_init(&raw) }

  deinit { posix_spawn_file_actions_destroy(&raw) }

  public func dup(_ fd: Int32, to target: Int32) {
    posix_spawn_file_actions_adddup2(&raw, fd, target)
  }

  public func dup(_ descriptor: FileDescriptor, to target: Int32) {
    dup(descriptor.rawValue, to: target)
  }

  public func open(_ path: String, to target: Int32, flags: Int32) {
    posix_spawn_file_actions_addopen(&raw, target, path, flags, 0o644)
  }

  /// The child starts in `directory` (glibc's posix_spawn_file_actions_addchdir_np).
  public func changeDirectory(_ directory: String) throws {
    guard let addChdir = LinuxSymbols.addChdir else {
      throw SystemError("posix_spawn_file_actions_addchdir_np", code: ENOSYS)
    }
    let result = addChdir(&raw, directory)
    guard result == 0 else { throw SystemError("chdir(\(directory))", code: result) }
  }
}

/// What a finished child printed, and how it ended.
public struct SpawnedOutput: Sendable {
  /// The exit status (128 + signal when killed).
  public let status: Int32
  public let stdout: String
  public let stderr: String
}

/// posix_spawn and waitpid, wrapped once for every child the harness starts: Foundation's
/// Process cannot put a child in its own process group, which teardown needs to kill a whole
/// tree, and a child it starts from a dispatch worker inherits that thread's mask, which blocks
/// every signal (a tor started so ignores SIGTERM). A child that inherits the environment is
/// told who started it (``ParentDeathWatch``), so the mock Tor, the app and the program
/// launcher end when this process dies.
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
      (environment
      ?? ParentDeathWatch.childEnvironment().map { "\($0.key)=\($0.value)" })
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

  /// Runs `arguments` to completion, blocking the calling thread (a dedicated one, see
  /// ``BlockingIO``), and returns what it printed on stdout and stderr, whatever its exit
  /// status. `stdin` is written to the child's standard input, then closed.
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
    let pid = try spawn(arguments, actions: actions, newProcessGroup: false)
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
