import Foundation

/// A TCP socket owned through one ``FileDescriptor``. Blocking calls here must run on dedicated
/// threads (see ``BlockingIO``); another thread may close the socket to wake them (the
/// descriptor's number is read and cleared under its lock).
public final class Socket: @unchecked Sendable {
  public let descriptor: FileDescriptor

  /// The number, for a poll set over many sockets and OpenSSL's SSL_set_fd; -1 once closed.
  /// Package access: outside the package, sockets are used through their methods.
  package var fd: Int32 { descriptor.rawValue }

  public init(adopting fd: Int32) { descriptor = FileDescriptor(adopting: fd) }

  public static func tcp(_ family: SocketAddress.Family) throws -> Socket {
    let domain = family == .ipv4 ? AF_INET : AF_INET6
    let fd = Glibc.socket(domain, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw SystemError("socket") }
    return Socket(adopting: fd)
  }

  /// A listening socket. Port 0 picks a free port; read it back with ``localAddress``.
  /// `freeBind` (IP_FREEBIND, which IPv6 sockets honour too) lets a service bind an address the
  /// kernel has not finished adding (an IPv6 address stays tentative until a work item runs,
  /// which a loaded machine delays), so start-up never races the address.
  /// `reusePort` (SO_REUSEPORT): several sockets of this user listen on one port, each with
  /// its own accept queue, and the kernel spreads new connections over them by hash.
  public static func listen(
    on address: SocketAddress, backlog: Int32 = 1024, freeBind: Bool = false,
    reusePort: Bool = false
  ) throws -> Socket {
    let socket = try tcp(address.family)
    socket.descriptor.reuseAddress(freeBind: freeBind)
    if reusePort {
      var one: Int32 = 1
      setsockopt(socket.fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size))
    }
    let bound = address.withSockAddr { Glibc.bind(socket.fd, $0, $1) }
    guard bound == 0 else { throw SystemError("bind(\(address))") }
    guard Glibc.listen(socket.fd, backlog) == 0 else { throw SystemError("listen(\(address))") }
    return socket
  }

  /// Connects with a deadline; the socket is blocking again afterwards.
  public static func connect(to address: SocketAddress, timeout: Double) throws -> Socket {
    let socket = try tcp(address.family)
    try socket.setNonBlocking(true)
    let result = address.withSockAddr { Glibc.connect(socket.fd, $0, $1) }
    if result != 0 {
      guard errno == EINPROGRESS else { throw SystemError("connect(\(address))") }
      var pfd = pollfd(fd: socket.fd, events: Int16(POLLOUT), revents: 0)
      // A real timeout: on the event clock the time runs at the scale while it does.
      let ready = RunClockHold.during { Glibc.poll(&pfd, 1, Int32(max(0, timeout * 1000))) }
      if ready == 0 { throw SystemError("connect(\(address))", code: ETIMEDOUT) }
      if ready < 0 { throw SystemError("poll(connect \(address))") }
      var soError: Int32 = 0
      var length = socklen_t(MemoryLayout<Int32>.size)
      getsockopt(socket.fd, SOL_SOCKET, SO_ERROR, &soError, &length)
      if soError != 0 { throw SystemError("connect(\(address))", code: soError) }
    }
    // Linux's ephemeral ports include low ones such as 39050 (the SOCKS port the probes try):
    // a connect to a port nobody listens on can pick that very port as its source and connect
    // to itself (a simultaneous open). No listener answered, so it is refused, as on a
    // platform whose ephemeral range excludes the port. (Once in a CI run this made a stalled
    // mock Tor look bootstrapped to the app's SOCKS probe.)
    // Closed with RST: a FIN would leave the port in TIME_WAIT for 60 s, where the listener
    // that comes later (the mock's SOCKS at its bootstrap's end) cannot bind it.
    if socket.localAddress == address {
      socket.resetOnClose()
      throw SystemError("connect(\(address)): connected to itself", code: ECONNREFUSED)
    }
    try socket.setNonBlocking(false)
    return socket
  }

  public func setNonBlocking(_ on: Bool) throws {
    let flags = fcntl(fd, F_GETFL)
    let updated = on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
    guard fcntl(fd, F_SETFL, updated) == 0 else { throw SystemError("fcntl(O_NONBLOCK)") }
  }

  /// Sets SO_RCVTIMEO and SO_SNDTIMEO so a stalled peer cannot hold a thread forever.
  public func setTimeouts(seconds: Double) {
    var tv = timeval(
      tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1_000_000))
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
  }

  public func accept() throws -> (Socket, SocketAddress?) {
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let client = withUnsafeMutablePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(fd, $0, &length) }
    }
    guard client >= 0 else { throw SystemError("accept") }
    _ = fcntl(client, F_SETFD, FD_CLOEXEC)
    return (Socket(adopting: client), SocketAddress(storage: storage))
  }

  /// Accepts from a non-blocking listening socket, the new socket non-blocking and
  /// close-on-exec in the same call (accept4: one system call where ``accept()`` and making it
  /// non-blocking take four). Nil when no connection is waiting.
  public func acceptNonBlocking() throws -> (Socket, SocketAddress?)? {
    var storage = sockaddr_storage()
    guard let client = try acceptDescriptorNonBlocking(peer: &storage) else { return nil }
    return (Socket(adopting: client), SocketAddress(storage: storage))
  }

  /// ``acceptNonBlocking()`` for an event loop that owns its descriptors itself: the bare
  /// descriptor, the peer's address left as accept4 wrote it (made into an address only when
  /// needed). Nil when no connection is waiting.
  package func acceptDescriptorNonBlocking(peer storage: inout sockaddr_storage) throws -> Int32? {
    while true {
      var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
      let client = withUnsafeMutablePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          Self.accept4(
            fd, $0, &length, Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue))
        }
      }
      if client >= 0 { return client }
      // A connection reset while it waited: the next one may be fine.
      if errno == EINTR || errno == ECONNABORTED { continue }
      if errno == EAGAIN || errno == EWOULDBLOCK { return nil }
      throw SystemError("accept4")
    }
  }

  /// Glibc's Swift overlay does not import accept4(2): looked up by name, as EventPoll's calls.
  private typealias Accept4 =
    @convention(c) (
      Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32
    ) -> Int32
  private static let accept4: Accept4 = unsafeBitCast(
    dlsym(UnsafeMutableRawPointer(bitPattern: 0), "accept4")!, to: Accept4.self)

  /// The address the socket is bound to.
  public var localAddress: SocketAddress? { Self.localAddress(of: fd) }

  /// The local port alone, without making an address.
  public var localPort: UInt16? { Self.localPort(of: fd) }

  /// The address descriptor `fd` is bound to (for loops that hold bare descriptors).
  package static func localAddress(of fd: Int32) -> SocketAddress? {
    localName(fd).flatMap { SocketAddress(storage: $0) }
  }

  /// The port descriptor `fd` is bound to, without making an address.
  package static func localPort(of fd: Int32) -> UInt16? {
    // sin_port and sin6_port sit at the same offset, in network order.
    localName(fd).map { name in
      withUnsafeBytes(of: name) { UInt16(bigEndian: $0.load(fromByteOffset: 2, as: UInt16.self)) }
    }
  }

  /// getsockname(2)'s answer.
  private static func localName(_ fd: Int32) -> sockaddr_storage? {
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let ok = withUnsafeMutablePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return ok == 0 ? storage : nil
  }

  /// Reads up to `max` bytes; an empty array means the peer closed.
  public func read(max: Int = 65536) throws -> [UInt8] { try descriptor.read(max: max) }

  /// Writes every byte or throws.
  public func write(_ bytes: [UInt8]) throws {
    var offset = 0
    while offset < bytes.count {
      let n = bytes.withUnsafeBytes {
        Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
      }
      if n < 0 {
        if errno == EINTR { continue }
        throw SystemError("write")
      }
      offset += n
    }
  }

  /// Reads up to `max` bytes into the front of `buffer`; 0 means the peer closed. For relay
  /// loops that reuse one buffer.
  public func read(into buffer: inout [UInt8], max: Int? = nil) throws -> Int {
    try descriptor.read(into: &buffer, max: max)
  }

  /// Waits up to `timeout` seconds (0: not at all) for `events`; what happened, empty on timeout.
  public func poll(_ events: PollEvents, timeout: Double?) throws -> PollEvents {
    try descriptor.poll(events, timeout: timeout)
  }

  /// Polls several sockets at once; one answer per entry, in order.
  public static func poll(_ entries: [(Socket, PollEvents)], timeout: Double?) throws
    -> [PollEvents]
  {
    try FileDescriptor.poll(entries.map { ($0.0.descriptor, $0.1) }, timeout: timeout)
  }

  public func shutdownWrite() { descriptor.shutdown(.writing) }

  /// Shuts both directions down: wakes a thread blocked in accept, poll or read on it.
  public func shutdown() { descriptor.shutdown(.both) }

  /// Makes the coming close send RST instead of FIN (SO_LINGER 0).
  public func resetOnClose() {
    var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
  }

  /// Closes with RST instead of FIN: how a reset is injected.
  public func reset() {
    resetOnClose()
    close()
  }

  public func close() { descriptor.close() }
}
