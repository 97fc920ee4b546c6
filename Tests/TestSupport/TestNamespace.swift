import FailClosedSupport
import Foundation

/// A network namespace of a test's own, `lo` up and nothing else: what runs in it (a command
/// behind ``exec`` or ``shell(_:)``, sockets made in ``perform(_:)``, a capture thread that
/// called ``enter()``) binds nothing on the host's loopback and reaches nothing outside it.
/// Needs root. ``remove()`` (in a defer) first stops every process still in it, which only the
/// test started, then deletes it.
public final class TestNamespace: Sendable {
  public let name: String

  /// Root and `ip`: what making one needs.
  public static var available: Bool {
    Privilege.isRoot && FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip")
  }

  /// `label` goes into the name, for a reader of `ip netns list`.
  public init(_ label: String = "test") throws {
    name = "fctest-\(label)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
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
  public var exec: [String] { ["ip", "netns", "exec", name] }

  public var path: String { "/run/netns/" + name }

  /// Runs a shell command inside; its exit status.
  @discardableResult
  public func shell(_ command: String) throws -> Int32 {
    try Spawner.capture(exec + ["bash", "-c", command]).status
  }

  /// Enters the namespace on the calling thread (a capture's `prepareThread`).
  public func enter() throws { try Self.enter(path) }

  /// Runs `body` on a fresh thread that has entered the namespace, and waits for it: sockets
  /// made there stay in the namespace, whichever thread uses them afterwards.
  public func perform<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
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

  /// Every TCP and UDP socket that listens or is bound inside (`ss`), one per line; empty when
  /// nothing is.
  public func listeners() throws -> [String] {
    let output = try Spawner.capture(exec + ["ss", "-H", "-l", "-n", "-t", "-u"])
    guard output.status == 0 else {
      throw SystemError("ss in \(name) exited \(output.status): \(output.stderr)", code: 0)
    }
    return output.stdout.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
  }

  /// The processes inside (their /proc/PID/ns/net is its inode).
  public func processes() -> [pid_t] {
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

  /// SIGKILL to whatever still runs inside (only the test's own processes can be there:
  /// nobody else knows its name), then deletes it.
  public func remove() {
    for _ in 0..<50 {
      let left = processes()
      if left.isEmpty { break }
      for pid in left { kill(pid, SIGKILL) }
      usleep(20_000)
    }
    _ = try? Self.run(["ip", "netns", "delete", name])
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

  static func run(_ arguments: [String]) throws {
    let output = try Spawner.capture(arguments)
    guard output.status == 0 else {
      throw SystemError(
        "\(arguments.joined(separator: " ")) exited \(output.status): \(output.stderr)", code: 0)
    }
  }
}

/// A result another thread sets, read after that thread is waited for.
private final class ThreadResult<Success>: @unchecked Sendable {
  private let lock = NSLock()
  private var value: Result<Success, any Error>?
  func set(_ made: Result<Success, any Error>) { lock.withLock { value = made } }
  func get() -> Result<Success, any Error> {
    lock.withLock { value ?? .failure(SystemError("no result", code: 0)) }
  }
}
