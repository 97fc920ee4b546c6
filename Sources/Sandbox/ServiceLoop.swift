import FailClosedSupport
import Foundation

/// The threads of one network service: an accept or receive loop per socket and a thread per
/// connection, all inside one namespace. ``stop()`` ends them all (loops poll a stop flag
/// every 100 ms; open connections are shut down).
public final class ServiceLoop: @unchecked Sendable {
  public let name: String
  let namespace: NetworkNamespace
  private let lock = NSLock()
  private var stopped = false
  private var connections: [ObjectIdentifier: Socket] = [:]
  /// Listening and datagram descriptors, shut down at stop to wake their loops' poll at once.
  private var wakeable: [Int32] = []
  private var running = 0
  private let finished = DispatchSemaphore(value: 0)

  init(name: String, namespace: NetworkNamespace) {
    self.name = name
    self.namespace = namespace
  }

  var isStopped: Bool { lock.withLock { stopped } }

  /// Accepts connections on `listener`, handing each to `handler` on its own thread (inside the
  /// namespace, so the handler's own outgoing connections start there too).
  func serve(_ listener: Socket, _ handler: @escaping @Sendable (Socket, SocketAddress?) -> Void)
    throws
  {
    lock.withLock {
      running += 1
      wakeable.append(listener.fd)
    }
    try namespace.detach("\(name).accept") { [self] in
      defer { loopEnded(closing: listener) }
      while !isStopped {
        var pfd = pollfd(fd: listener.fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pfd, 1, 100) > 0 else { continue }
        guard let (connection, peer) = try? listener.accept() else { continue }
        connection.setTimeouts(seconds: 30)
        guard track(connection) else {
          connection.close()
          return
        }
        try? namespace.detach("\(name).conn") { [self] in
          handler(connection, peer)
          untrack(connection)
          connection.close()
        }
      }
    }
  }

  /// Receives datagrams on `socket`; `handler` returns the reply, if any.
  func serve(
    _ socket: DatagramSocket, _ handler: @escaping @Sendable ([UInt8], SocketAddress) -> [UInt8]?
  ) throws {
    lock.withLock {
      running += 1
      wakeable.append(socket.fd)
    }
    try namespace.detach("\(name).udp") { [self] in
      defer { loopEnded(closing: nil) }
      defer { socket.close() }
      while !isStopped {
        guard let (bytes, peer) = try? socket.receive(timeout: 0.1), let peer else { continue }
        if let reply = handler(bytes, peer) { try? socket.send(reply, to: peer) }
      }
    }
  }

  private func track(_ connection: Socket) -> Bool {
    lock.withLock {
      if stopped { return false }
      connections[ObjectIdentifier(connection)] = connection
      return true
    }
  }

  private func untrack(_ connection: Socket) {
    lock.withLock { _ = connections.removeValue(forKey: ObjectIdentifier(connection)) }
  }

  private func loopEnded(closing listener: Socket?) {
    listener?.close()
    finished.signal()
  }

  /// Stops every loop and shuts every open connection; waits (at most a second per loop) for
  /// the loops to end.
  public func stop() {
    let (open, loops, fds): ([Socket], Int, [Int32]) = lock.withLock {
      if stopped { return ([], 0, []) }
      stopped = true
      return (Array(connections.values), running, wakeable)
    }
    // The loops close their own descriptors after waking, so these are still open here.
    for fd in fds { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
    for connection in open { _ = Glibc.shutdown(connection.fd, Int32(SHUT_RDWR)) }
    for _ in 0..<loops { _ = finished.wait(timeout: .now() + 1) }
  }
}
