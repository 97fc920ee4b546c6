import Foundation

/// An epoll(7) set that another thread can wake: one loop thread waits on many descriptors at
/// once instead of a thread blocking on each. Descriptors are registered with a token (the
/// loop's own key for the connection) that comes back with their events. The loop thread must
/// be a dedicated one (see ``BlockingIO``): ``wait(timeout:_:)`` blocks.
///
/// Glibc's Swift overlay does not import <sys/epoll.h> or <sys/eventfd.h>, so the calls are
/// looked up by name and `struct epoll_event` is laid out by hand (packed, 12 bytes, on
/// x86_64; 16 bytes with the data at offset 8 elsewhere).
public final class EventPoll: @unchecked Sendable {
  /// What a descriptor waits for and what it reports (epoll's bits).
  public struct Events: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let readable = Events(rawValue: 0x001)
    public static let writable = Events(rawValue: 0x004)
    /// Reported whether asked for or not.
    public static let error = Events(rawValue: 0x008)
    public static let hangUp = Events(rawValue: 0x010)
    /// EPOLLRDHUP: the peer shut down its writing side.
    public static let peerClosedWriting = Events(rawValue: 0x2000)
    /// EPOLLET: report each change once instead of for as long as the state holds.
    public static let edgeTriggered = Events(rawValue: 1 << 31)
    /// EPOLLEXCLUSIVE: of several sets watching one descriptor (a listening socket shared by
    /// several loops), wake one, not all.
    public static let exclusive = Events(rawValue: 1 << 28)
  }

  private let epoll: FileDescriptor
  private let waker: FileDescriptor
  // What every wait and change needs, read once: not the descriptor's lock nor a lazy global's
  // once-check per call. The loop thread alone waits and changes the set, and it is closed
  // only after that thread has stopped (see ``EventLoopStop``), so the bare number is safe.
  private let epollFD: Int32
  private let waitCall: Calls.Wait
  private let controlCall: Calls.Control
  private let buffer: UnsafeMutableRawPointer
  private let capacity: Int
  private static let wakeToken = UInt64.max

  /// A set reporting at most `capacity` descriptors per wait.
  public init(capacity: Int = 256) throws {
    guard let create = Calls.create, let eventfd = Calls.eventfd,
      let controlFunction = Calls.control,
      let waitFunction = Calls.wait
    else { throw SystemError("epoll_create1", code: ENOSYS) }
    let epollFD = create(Calls.cloexec)
    guard epollFD >= 0 else { throw SystemError("epoll_create1") }
    epoll = FileDescriptor(adopting: epollFD)
    self.epollFD = epollFD
    waitCall = waitFunction
    controlCall = controlFunction
    let wakeFD = eventfd(0, Calls.cloexec | Int32(O_NONBLOCK))
    guard wakeFD >= 0 else { throw SystemError("eventfd") }
    waker = FileDescriptor(adopting: wakeFD)
    self.capacity = max(1, capacity)
    buffer = UnsafeMutableRawPointer.allocate(
      byteCount: self.capacity * Calls.eventSize, alignment: 8)
    try control(Calls.add, wakeFD, .readable, token: Self.wakeToken)
  }

  deinit {
    buffer.deallocate()
    close()
  }

  /// Watches `fd` for `events`; its events come back with `token` (not `UInt64.max`).
  package func add(_ fd: Int32, _ events: Events, token: UInt64) throws {
    try control(Calls.add, fd, events, token: token)
  }

  /// Changes what `fd` is watched for.
  package func modify(_ fd: Int32, _ events: Events, token: UInt64) throws {
    try control(Calls.modify, fd, events, token: token)
  }

  /// Stops watching `fd` (closing it does as much once no other descriptor refers to it).
  package func remove(_ fd: Int32) {
    try? control(Calls.delete, fd, [], token: 0)
  }

  /// Waits up to `timeout` seconds (nil: without limit) and hands each ready descriptor's
  /// token and events to `body`; a ``wake()`` ends the wait early. Returns how many were ready.
  @discardableResult
  public func wait(timeout: Double?, _ body: (UInt64, Events) -> Void) throws -> Int {
    let milliseconds = timeout.map { Int32(max(0, min($0, 86_400) * 1000).rounded(.up)) } ?? -1
    let count = waitCall(epollFD, buffer, Int32(capacity), milliseconds)
    if count < 0 {
      if errno == EINTR { return 0 }
      throw SystemError("epoll_wait")
    }
    var reported = 0
    for index in 0..<Int(count) {
      let entry = buffer + index * Calls.eventSize
      let events = entry.loadUnaligned(as: UInt32.self)
      let token = entry.loadUnaligned(fromByteOffset: Calls.dataOffset, as: UInt64.self)
      if token == Self.wakeToken {
        var drained: UInt64 = 0
        _ = Glibc.read(waker.rawValue, &drained, 8)
        continue
      }
      reported += 1
      body(token, Events(rawValue: events))
    }
    return reported
  }

  /// Ends a ``wait(timeout:_:)`` in progress (or the next one) from any thread.
  public func wake() {
    var one: UInt64 = 1
    _ = Glibc.write(waker.rawValue, &one, 8)
  }

  public func close() {
    waker.close()
    epoll.close()
  }

  private func control(_ operation: Int32, _ fd: Int32, _ events: Events, token: UInt64) throws {
    var entry = (UInt64(0), UInt64(0))
    let result = withUnsafeMutableBytes(of: &entry) { raw in
      raw.storeBytes(of: events.rawValue, toByteOffset: 0, as: UInt32.self)
      raw.storeBytes(of: token, toByteOffset: Calls.dataOffset, as: UInt64.self)
      return controlCall(epollFD, operation, fd, raw.baseAddress!)
    }
    guard result == 0 else { throw SystemError("epoll_ctl") }
  }

  /// The calls, found once by name, and the constants of <sys/epoll.h>.
  private enum Calls {
    typealias Create = @convention(c) (Int32) -> Int32
    typealias Control = @convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer) -> Int32
    typealias Wait = @convention(c) (Int32, UnsafeMutableRawPointer, Int32, Int32) -> Int32
    typealias EventFD = @convention(c) (UInt32, Int32) -> Int32

    static let create: Create? = lookup("epoll_create1").map { unsafeBitCast($0, to: Create.self) }
    static let control: Control? = lookup("epoll_ctl").map { unsafeBitCast($0, to: Control.self) }
    static let wait: Wait? = lookup("epoll_wait").map { unsafeBitCast($0, to: Wait.self) }
    static let eventfd: EventFD? = lookup("eventfd").map { unsafeBitCast($0, to: EventFD.self) }

    static let add: Int32 = 1
    static let delete: Int32 = 2
    static let modify: Int32 = 3
    /// EPOLL_CLOEXEC and EFD_CLOEXEC are O_CLOEXEC.
    static let cloexec = Int32(O_CLOEXEC)

    #if arch(x86_64)
      static let eventSize = 12
      static let dataOffset = 4
    #else
      static let eventSize = 16
      static let dataOffset = 8
    #endif

    private static func lookup(_ name: String) -> UnsafeMutableRawPointer? {
      dlsym(UnsafeMutableRawPointer(bitPattern: 0), name)
    }
  }
}
