import FailClosedSupport
import Foundation

/// A named network namespace (/run/netns/<name>). Sockets keep the namespace of the thread that
/// created them, so the harness creates them on a thread that has entered the namespace with
/// setns(2) (per thread for network namespaces) and may use them from any thread afterwards.
public struct NetworkNamespace: Sendable, Hashable {
  public let name: String

  public init(_ name: String) { self.name = name }

  public var path: String { "/run/netns/" + name }

  /// Moves the calling thread into this namespace. Call only on a dedicated thread that
  /// does nothing else afterwards (``perform(_:)`` and ``detach(_:_:)`` do that).
  public func enterOnCurrentThread() throws {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw SystemError("open(\(path))") }
    defer { close(fd) }
    guard LinuxCalls.setns(fd, LinuxCalls.cloneNewNet) == 0 else {
      throw SystemError("setns(\(name))")
    }
  }

  /// Runs `body` on a fresh thread inside this namespace and waits for it.
  public func perform<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
      box.result = Result {
        try enterOnCurrentThread()
        return try body()
      }
      done.signal()
    }
    thread.name = "netns." + name
    thread.start()
    done.wait()
    return try box.result!.get()
  }

  /// Runs `body` inside this namespace on a fresh thread, without blocking the caller's thread.
  public func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await BlockingIO.run("netns." + name) {
      try enterOnCurrentThread()
      return try body()
    }
  }

  /// Starts a long-lived thread inside this namespace (a server loop).
  public func detach(_ threadName: String, _ body: @escaping @Sendable () -> Void) throws {
    let entered = DispatchSemaphore(value: 0)
    let failure = ResultBox<Void>()
    BlockingIO.detach(threadName) {
      do {
        try enterOnCurrentThread()
        failure.result = .success(())
      } catch {
        failure.result = .failure(error)
      }
      entered.signal()
      if case .success = failure.result { body() }
    }
    entered.wait()
    try failure.result!.get()
  }

  /// The namespace's inode: processes whose /proc/<pid>/ns/net has it live in this namespace.
  public func inode() throws -> UInt64 {
    var info = stat()
    guard stat(path, &info) == 0 else { throw SystemError("stat(\(path))") }
    return UInt64(info.st_ino)
  }

  /// Processes (thread-group leaders) currently in the namespace with inode `inode`.
  public static func processes(inNamespaceInode inode: UInt64) -> [pid_t] {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else {
      return []
    }
    var found: [pid_t] = []
    for entry in entries {
      guard let pid = pid_t(entry) else { continue }
      var info = stat()
      guard stat("/proc/\(pid)/ns/net", &info) == 0 else { continue }
      if UInt64(info.st_ino) == inode { found.append(pid) }
    }
    return found
  }
}

/// A slot a worker thread fills and the waiting thread reads after a semaphore.
final class ResultBox<T>: @unchecked Sendable {
  var result: Result<T, any Error>?
}
