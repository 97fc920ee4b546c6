import Foundation

/// One open file descriptor (a socket, a pipe end), owned: closed once, on ``close()`` or at
/// deinit. Reads and closes of the number go through a lock because servers stop by closing
/// from another thread while a thread blocked in accept, poll or read holds the descriptor (a
/// data race under ThreadSanitizer otherwise). Blocking calls must run on dedicated threads
/// (see ``BlockingIO``).
public final class FileDescriptor: @unchecked Sendable {
  private var value: Int32
  private let lock = NSLock()

  public init(adopting raw: Int32) { value = raw }

  deinit { close() }

  /// The number, for the few C interfaces that take one (OpenSSL's SSL_set_fd, a poll set
  /// over many sockets); -1 once closed. Package access: not part of the library's API.
  package var rawValue: Int32 { lock.withLock { value } }

  public var isOpen: Bool { rawValue >= 0 }

  public func close() {
    lock.withLock {
      if value >= 0 {
        Glibc.close(value)
        value = -1
      }
    }
  }

  /// A close-on-exec pipe, made atomically (pipe2) so a child spawned at the same moment by
  /// another thread cannot inherit it and hold its write end open.
  public static func pipe() throws -> (read: FileDescriptor, write: FileDescriptor) {
    var fds: [Int32] = [-1, -1]
    guard let pipe2 = LinuxSymbols.pipe2 else { throw SystemError("pipe2", code: ENOSYS) }
    let result = fds.withUnsafeMutableBufferPointer { pipe2($0.baseAddress!, O_CLOEXEC) }
    guard result == 0 else { throw SystemError("pipe2") }
    return (FileDescriptor(adopting: fds[0]), FileDescriptor(adopting: fds[1]))
  }

  /// Reads up to `max` bytes (retrying on EINTR); an empty array means end of file.
  public func read(max: Int = 65536) throws -> [UInt8] {
    var buffer = [UInt8](repeating: 0, count: max)
    let count = try read(into: &buffer, max: max)
    return Array(buffer.prefix(count))
  }

  /// Reads up to `max` bytes into the front of `buffer` (no larger than it); 0 is end of file.
  /// For loops that reuse one buffer.
  public func read(into buffer: inout [UInt8], max: Int? = nil) throws -> Int {
    let limit = Swift.min(max ?? buffer.count, buffer.count)
    let fd = rawValue
    while true {
      let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, limit) }
      if n >= 0 { return n }
      if errno == EINTR { continue }
      throw SystemError("read")
    }
  }

  /// Writes every byte (retrying on EINTR and short writes) or throws.
  public func write(_ bytes: [UInt8]) throws {
    let fd = rawValue
    var offset = 0
    while offset < bytes.count {
      let n = bytes.withUnsafeBytes {
        Glibc.write(fd, $0.baseAddress! + offset, bytes.count - offset)
      }
      if n < 0 {
        if errno == EINTR { continue }
        throw SystemError("write")
      }
      offset += n
    }
  }

  enum ShutdownDirection {
    case writing, both
    var how: Int32 { self == .writing ? Int32(SHUT_WR) : Int32(SHUT_RDWR) }
  }

  /// shutdown(2), for the socket types of this module.
  func shutdown(_ direction: ShutdownDirection) { _ = Glibc.shutdown(rawValue, direction.how) }

  /// SO_REUSEADDR, and IP_FREEBIND when asked (see ``Socket/listen(on:backlog:freeBind:)``).
  func reuseAddress(freeBind: Bool) {
    var one: Int32 = 1
    let size = socklen_t(MemoryLayout<Int32>.size)
    let fd = rawValue
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, size)
    if freeBind { setsockopt(fd, Int32(IPPROTO_IP), IP_FREEBIND, &one, size) }
  }

  /// Waits up to `timeout` seconds (nil: without limit, 0: not at all) for one of `events`;
  /// returns what happened (empty on timeout). Hang-ups and errors are always reported.
  public func poll(_ events: PollEvents, timeout: Double?) throws -> PollEvents {
    try Self.poll([(self, events)], timeout: timeout)[0]
  }

  /// ``poll(_:timeout:)`` over several descriptors at once; one answer per entry, in order.
  /// An entry waiting for no events (an empty set) still reports hang-ups and errors.
  public static func poll(
    _ entries: [(FileDescriptor, PollEvents)], timeout: Double?
  ) throws -> [PollEvents] {
    var fds = entries.map { pollfd(fd: $0.0.rawValue, events: $0.1.rawValue, revents: 0) }
    let milliseconds = timeout.map { Int32(Swift.max(0, Swift.min($0, 86_400) * 1000)) } ?? -1
    while true {
      let ready = Glibc.poll(&fds, nfds_t(fds.count), milliseconds)
      if ready >= 0 { return fds.map { PollEvents(rawValue: $0.revents) } }
      if errno == EINTR { continue }
      throw SystemError("poll")
    }
  }
}

/// What a poll waits for and reports.
public struct PollEvents: OptionSet, Sendable, Hashable {
  public let rawValue: Int16
  public init(rawValue: Int16) { self.rawValue = rawValue }

  public static let readable = PollEvents(rawValue: Int16(POLLIN))
  public static let writable = PollEvents(rawValue: Int16(POLLOUT))
  /// POLLRDHUP (Linux, 0x2000): the peer shut down its writing side. Glibc's macro is not
  /// imported into Swift.
  public static let peerClosedWriting = PollEvents(rawValue: 0x2000)
  /// Reported whether asked for or not.
  public static let hangUp = PollEvents(rawValue: Int16(POLLHUP))
  public static let error = PollEvents(rawValue: Int16(POLLERR))
  public static let invalid = PollEvents(rawValue: Int16(POLLNVAL))
}

/// Linux calls that Glibc's Swift overlay hides behind _GNU_SOURCE, looked up once by name.
enum LinuxSymbols {
  typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32

  static let pipe2: Pipe2? = lookup("pipe2").map { unsafeBitCast($0, to: Pipe2.self) }

  private static func lookup(_ name: String) -> UnsafeMutableRawPointer? {
    dlsym(UnsafeMutableRawPointer(bitPattern: 0), name)
  }
}
