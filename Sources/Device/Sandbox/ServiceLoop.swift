import FailClosedSupport
import Foundation

/// The threads of one network service: an accept or receive loop per socket and a thread per
/// connection, all inside one namespace. ``stop()`` ends them all: it shuts down every
/// socket the loops own, which wakes their poll at once. Sockets are shut down and closed only
/// under one lock, and a closed one forgets its number, so a stop never touches a number
/// already reused elsewhere.
public final class ServiceLoop: @unchecked Sendable {
  public let name: String
  let namespace: NetworkNamespace
  private let lock = NSLock()
  private var stopped = false
  /// Open sockets (listeners, datagram sockets and accepted connections), by identity: how
  /// each is shut down (by ``stop()``) and closed.
  private var open: [ObjectIdentifier: (shutdown: () -> Void, close: () -> Void)] = [:]
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
    guard adopt(listener.descriptor, shutdown: listener.shutdown, close: listener.close) else {
      listener.close()
      return
    }
    lock.withLock { running += 1 }
    try namespace.detach("\(name).accept") { [self] in
      defer { loopEnded(listener.descriptor) }
      while !isStopped {
        guard let ready = try? listener.poll(.readable, timeout: 0.1), !ready.isEmpty else {
          continue
        }
        guard let (connection, peer) = try? listener.accept() else { continue }
        connection.setTimeouts(seconds: 30)
        guard adopt(connection.descriptor, shutdown: connection.shutdown, close: connection.close)
        else {
          connection.close()
          return
        }
        try? namespace.detach("\(name).conn") { [self] in
          let closer = handler(connection, peer)
          release(connection.descriptor, closer: closer)
        }
      }
    }
  }

  /// Receives datagrams on `socket`; `handler` returns the reply, if any.
  func serve(
    _ socket: DatagramSocket, _ handler: @escaping @Sendable ([UInt8], SocketAddress) -> [UInt8]?
  ) throws {
    guard adopt(socket.descriptor, shutdown: socket.shutdown, close: socket.close) else {
      socket.close()
      return
    }
    lock.withLock { running += 1 }
    try namespace.detach("\(name).udp") { [self] in
      defer { loopEnded(socket.descriptor) }
      while !isStopped {
        guard let (bytes, peer) = try? socket.receive(timeout: 0.1), let peer else { continue }
        if let reply = handler(bytes, peer) { try? socket.send(reply, to: peer) }
      }
    }
  }

  /// Takes ownership of a socket; false once stopped.
  private func adopt(
    _ descriptor: FileDescriptor, shutdown: @escaping () -> Void, close: @escaping () -> Void
  ) -> Bool {
    lock.withLock {
      if stopped { return false }
      open[ObjectIdentifier(descriptor)] = (shutdown, close)
      return true
    }
  }

  /// Closes a socket the service owns (once).
  private func release(_ descriptor: FileDescriptor, closer: (() -> Void)? = nil) {
    lock.withLock {
      closer?()
      open.removeValue(forKey: ObjectIdentifier(descriptor))?.close()
    }
  }

  private func loopEnded(_ descriptor: FileDescriptor) {
    release(descriptor)
    finished.signal()
  }

  /// Stops every loop and shuts every open socket down; waits (at most a second per loop) for
  /// the loops to end.
  public func stop() {
    let loops: Int = lock.withLock {
      if stopped { return 0 }
      stopped = true
      for socket in open.values { socket.shutdown() }
      return running
    }
    for _ in 0..<loops { _ = finished.wait(timeout: .now() + 1) }
  }
}
