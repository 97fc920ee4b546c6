import FailClosedSupport
import Foundation

/// The threads of one network service: an accept or receive loop per socket and a thread per
/// connection, all inside one namespace. ``stop()`` ends them all: it shuts down every
/// descriptor the loops own, which wakes their poll at once. Descriptors are shut down and
/// closed only under one lock, so a stop can never touch a number already reused elsewhere.
public final class ServiceLoop: @unchecked Sendable {
  public let name: String
  let namespace: NetworkNamespace
  private let lock = NSLock()
  private var stopped = false
  /// Open descriptors: listeners, datagram sockets and accepted connections.
  private var open: [Int32: () -> Void] = [:]
  private var running = 0
  private let finished = DispatchSemaphore(value: 0)

  init(name: String, namespace: NetworkNamespace) {
    self.name = name
    self.namespace = namespace
  }

  var isStopped: Bool { lock.withLock { stopped } }

  /// A connection handler. It may return a closer to run (under the loop's lock) instead of
  /// closing the socket itself, for wrappers such as TLS that close the socket on their own.
  typealias ConnectionHandler = @Sendable (Socket, SocketAddress?) -> (() -> Void)?

  /// Accepts connections on `listener`, handing each to `handler` on its own thread (inside the
  /// namespace, so the handler's own outgoing connections start there too).
  func serve(_ listener: Socket, _ handler: @escaping ConnectionHandler) throws {
    guard adopt(listener.fd, close: { listener.close() }) else {
      listener.close()
      return
    }
    lock.withLock { running += 1 }
    try namespace.detach("\(name).accept") { [self] in
      defer { loopEnded(listener.fd) }
      while !isStopped {
        var pfd = pollfd(fd: listener.fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, 100) > 0 else { continue }
        guard let (connection, peer) = try? listener.accept() else { continue }
        connection.setTimeouts(seconds: 30)
        guard adopt(connection.fd, close: { connection.close() }) else {
          connection.close()
          return
        }
        let fd = connection.fd
        try? namespace.detach("\(name).conn") { [self] in
          let closer = handler(connection, peer)
          release(fd, closer: closer)
        }
      }
    }
  }

  /// Receives datagrams on `socket`; `handler` returns the reply, if any.
  func serve(
    _ socket: DatagramSocket, _ handler: @escaping @Sendable ([UInt8], SocketAddress) -> [UInt8]?
  ) throws {
    guard adopt(socket.fd, close: { socket.close() }) else {
      socket.close()
      return
    }
    lock.withLock { running += 1 }
    let fd = socket.fd
    try namespace.detach("\(name).udp") { [self] in
      defer { loopEnded(fd) }
      while !isStopped {
        guard let (bytes, peer) = try? socket.receive(timeout: 0.1), let peer else { continue }
        if let reply = handler(bytes, peer) { try? socket.send(reply, to: peer) }
      }
    }
  }

  /// Takes ownership of a descriptor; false once stopped.
  private func adopt(_ fd: Int32, close: @escaping () -> Void) -> Bool {
    lock.withLock {
      if stopped { return false }
      open[fd] = close
      return true
    }
  }

  /// Closes a descriptor the service owns (once).
  private func release(_ fd: Int32, closer: (() -> Void)? = nil) {
    lock.withLock {
      closer?()
      open.removeValue(forKey: fd)?()
    }
  }

  private func loopEnded(_ fd: Int32) {
    release(fd)
    finished.signal()
  }

  /// Stops every loop and shuts every open descriptor; waits (at most a second per loop) for
  /// the loops to end.
  public func stop() {
    let loops: Int = lock.withLock {
      if stopped { return 0 }
      stopped = true
      for fd in open.keys { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
      return running
    }
    for _ in 0..<loops { _ = finished.wait(timeout: .now() + 1) }
  }
}
