import FailClosedSupport
import Foundation

/// A network namespace of a test's own, `lo` up and nothing else: a private network started in
/// it (its tors behind ``exec``, its sockets made on a thread inside it with ``perform(_:)``)
/// binds nothing on the host's loopback and reaches nothing outside it. ``remove()`` (in a
/// defer) first stops every process still in it, which only the test started, then deletes it.
final class TestnetNamespace: Sendable {
  let name: String

  /// Root, `ip` and a kernel with network namespaces: what every test here that starts a
  /// network needs.
  static var available: Bool {
    Privilege.isRoot && FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip")
  }

  init(_ label: String) throws {
    name = "fctn-\(label)-\(getpid())-\(UInt16.random(in: 0...UInt16.max))"
    try Self.run(["ip", "netns", "add", name])
    do {
      try Self.run(["ip", "-n", name, "link", "set", "lo", "up"])
    } catch {
      remove()
      throw error
    }
  }

  /// The launcher prefix that runs a program inside (it execs in place: the PID is the
  /// program's own).
  var exec: [String] { ["ip", "netns", "exec", name] }

  var path: String { "/run/netns/" + name }

  /// Runs `body` on a fresh thread that has entered the namespace, and waits for it: sockets
  /// made there stay in the namespace, whichever thread uses them afterwards.
  func perform<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
    let path = path
    let result = ThreadResult<T>()
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
      result.set(
        Result {
          try Self.enter(path)
          return try body()
        })
      done.signal()
    }
    thread.start()
    done.wait()
    return try result.get().get()
  }

  static func enter(_ path: String) throws {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw SystemError("open(\(path))") }
    defer { close(fd) }
    // setns is not exported by Swift's Glibc module; reach it through the dynamic linker.
    typealias SetNS = @convention(c) (Int32, Int32) -> Int32
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "setns") else {
      throw SystemError("dlsym(setns)", code: ENOSYS)
    }
    let cloneNewNet: Int32 = 0x4000_0000
    guard unsafeBitCast(symbol, to: SetNS.self)(fd, cloneNewNet) == 0 else {
      throw SystemError("setns(\(path))")
    }
  }

  /// Every TCP and UDP socket that listens or is bound in the namespace (`ss`), one per line;
  /// empty when nothing is.
  func listeners() throws -> [String] {
    let output = try Spawner.capture(exec + ["ss", "-H", "-l", "-n", "-t", "-u"])
    guard output.status == 0 else {
      throw SystemError("ss in \(name) exited \(output.status): \(output.stderr)", code: 0)
    }
    return output.stdout.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
  }

  /// The processes in the namespace (their /proc/PID/ns/net is its inode).
  func processes() -> [pid_t] {
    var info = stat()
    guard stat(path, &info) == 0 else { return [] }
    let link = "net:[\(info.st_ino)]"
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { entry in
      guard let pid = pid_t(entry), pid != getpid(),
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(entry)/ns/net"))
          == link
      else { return nil }
      return pid
    }
  }

  /// SIGKILL to whatever still runs in the namespace (only the test's own processes can be
  /// there: nobody else knows its name), then deletes it.
  func remove() {
    for _ in 0..<50 {
      let left = processes()
      if left.isEmpty { break }
      for pid in left { kill(pid, SIGKILL) }
      usleep(20_000)
    }
    _ = try? Self.run(["ip", "netns", "delete", name])
  }

  static func run(_ arguments: [String]) throws {
    let output = try Spawner.capture(arguments)
    guard output.status == 0 else {
      throw SystemError(
        "\(arguments.joined(separator: " ")) exited \(output.status): \(output.stderr)", code: 0)
    }
  }
}

/// A result another thread sets, read after that thread is waited for.
final class ThreadResult<Success>: @unchecked Sendable {
  private let lock = NSLock()
  private var value: Result<Success, any Error>?
  func set(_ made: Result<Success, any Error>) { lock.withLock { value = made } }
  func get() -> Result<Success, any Error> {
    lock.withLock { value ?? .failure(SystemError("no result", code: 0)) }
  }
}
