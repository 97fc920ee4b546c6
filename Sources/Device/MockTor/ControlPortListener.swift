import FailClosedSupport
import Foundation
import TorControl

/// The mock's control port: accepts controllers on a loopback address and runs one
/// ``ControlSession`` per connection, all on one poll(2) thread (no thread per client, so
/// stalled or hostile controllers cost a descriptor each). Async 650 events handed to
/// ``publish(_:)`` go to every connection that subscribed to them, between replies.
public final class ControlPortListener: @unchecked Sendable {
  private struct Connection {
    let socket: Socket
    let peer: SocketAddress?
    var session: ControlSession
    var outbox: [UInt8] = []
    var closeAfterFlush = false
    var lastActivity: Double
    /// When it was accepted: an unauthenticated connection has ``authenticationTimeout`` from
    /// here, however busy it keeps the line.
    let acceptedAt: Double
    /// Nothing is written before this real time (the heartbeat-delay fault).
    var holdUntil = 0.0
  }

  public let address: SocketAddress
  public let authentication: ControlAuthentication
  public let maxConnections: Int
  /// Real seconds an unauthenticated controller may stay silent before it is closed.
  public let idleTimeout: Double
  /// At most this many connections may be unauthenticated at once; a new one evicts the
  /// oldest, so idle strangers can never lock the owner out (256 of them used to, for 300 s).
  public let maxUnauthenticated: Int
  /// Real seconds a connection has to authenticate, counted from its accept.
  public let authenticationTimeout: Double
  /// A connection whose unsent replies and events exceed this is closed (a stalled reader).
  public static let maximumOutbox = 4 * 1024 * 1024

  private let listening: Socket
  private weak var backend: (any ControlPortBackend)?
  private let maximumCommandBytes: Int
  private let makeNonce: @Sendable () -> [UInt8]
  private let realTime = SystemClock()
  private let lock = NSLock()
  private var queuedEvents: [ControlAsyncEvent] = []
  private var dropRequest: Bool?
  private var heartbeatDelay = 0.0
  private var stopping = false
  private var started = false
  private var liveConnections = 0
  private var loopThread: pthread_t?
  private let finished = DispatchSemaphore(value: 0)

  /// Binds at once (port 0 picks a free one; read ``address``). Refuses a non-loopback address
  /// unless `allowNonLoopback`.
  public init(
    address: SocketAddress, authentication: ControlAuthentication,
    backend: any ControlPortBackend, maxConnections: Int = 256, idleTimeout: Double = 300,
    maxUnauthenticated: Int = 32, authenticationTimeout: Double = 30,
    maximumCommandBytes: Int = ControlCommandFramer.defaultMaximumCommandBytes,
    allowNonLoopback: Bool = false,
    makeNonce: @escaping @Sendable () -> [UInt8] = ControlPortListener.randomNonce
  ) throws {
    guard address.isLoopback || allowNonLoopback else {
      throw ControlPortError.notLoopback(address)
    }
    listening = try Socket.listen(on: address, backlog: 128)
    try listening.setNonBlocking(true)
    self.address = listening.localAddress ?? address
    self.authentication = authentication
    self.backend = backend
    self.maxConnections = maxConnections
    self.idleTimeout = idleTimeout
    self.maxUnauthenticated = max(1, min(maxUnauthenticated, maxConnections))
    self.authenticationTimeout = authenticationTimeout
    self.maximumCommandBytes = maximumCommandBytes
    self.makeNonce = makeNonce
  }

  public static func randomNonce() -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    return (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
  }

  /// Connections open now.
  public var connectionCount: Int { lock.withLock { liveConnections } }

  /// A fault: after a `GETINFO orconn-status` (Onion Browser's heartbeat), the connection
  /// writes nothing for this many real seconds. Answers stay in order, so everything behind
  /// the heartbeat's answer waits too, as behind a busy tor. 0 (the default) turns it off.
  public var orconnStatusReplyDelay: Double {
    get { lock.withLock { heartbeatDelay } }
    set { lock.withLock { heartbeatDelay = max(0, newValue) } }
  }

  public func start() {
    let first = lock.withLock {
      defer { started = true }
      return !started
    }
    guard first else { return }
    BlockingIO.ignoreSIGPIPE()
    BlockingIO.detach("mocktor.control.\(address.port)") { [self] in
      lock.withLock { loopThread = pthread_self() }
      loop()
      finished.signal()
    }
  }

  /// Queues events for every subscribed connection (sent within one poll interval).
  public func publish(_ events: [ControlAsyncEvent]) {
    guard !events.isEmpty else { return }
    lock.withLock { queuedEvents += events }
  }

  /// Closes every connection, keeping the listener: `flush` sends what is queued first (a clean
  /// shutdown after "250 OK"), otherwise the connections just drop (a crash).
  public func dropConnections(flush: Bool) {
    lock.withLock { dropRequest = flush }
  }

  /// Stops accepting and closes everything. Safe to call from a backend callback on the
  /// listener's own thread (then it does not wait).
  public func stop() {
    let (wasRunning, neverStarted, onLoopThread) = lock.withLock {
      let running = started && !stopping
      let never = !started && !stopping
      stopping = true
      let onLoop = loopThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false
      return (running, never, onLoop)
    }
    if neverStarted { listening.close() }
    if wasRunning && !onLoopThread { finished.wait() }
  }

  // MARK: - The poll loop

  private func loop() {
    var connections: [Connection] = []
    var buffer = [UInt8](repeating: 0, count: 16384)
    defer {
      flushAndReap(&connections)
      for connection in connections { connection.socket.close() }
      listening.close()
      lock.withLock { liveConnections = 0 }
    }
    while true {
      let (stop, drop) = lock.withLock {
        defer { dropRequest = nil }
        return (stopping, dropRequest)
      }
      if stop { return }
      if let flush = drop {
        if flush {
          for index in connections.indices { connections[index].closeAfterFlush = true }
        } else {
          for connection in connections { connection.socket.close() }
          connections.removeAll()
        }
      }
      renderQueuedEvents(&connections)
      flushAndReap(&connections)

      var fds = [pollfd(fd: listening.fd, events: Int16(POLLIN), revents: 0)]
      let pollTime = realTime.now
      for connection in connections {
        var wanted: Int32 = connection.closeAfterFlush ? 0 : POLLIN
        if !connection.outbox.isEmpty && pollTime >= connection.holdUntil { wanted |= POLLOUT }
        fds.append(pollfd(fd: connection.socket.fd, events: Int16(wanted), revents: 0))
      }
      let ready = poll(&fds, nfds_t(fds.count), 50)
      if ready < 0 && errno != EINTR { return }
      if ready > 0 {
        // Events queued while this thread waited go out before any answer read now, as tor
        // writes them: an answer never reports a phase whose event has not been sent yet.
        renderQueuedEvents(&connections)
        for index in connections.indices.reversed() {
          let revents = Int32(fds[index + 1].revents)
          guard revents & (POLLIN | POLLHUP | POLLERR) != 0 else { continue }
          if !receive(&connections[index], buffer: &buffer) {
            connections[index].socket.close()
            connections.remove(at: index)
          }
        }
        if fds[0].revents & Int16(POLLIN) != 0 { acceptAll(&connections, buffer: &buffer) }
      }
      let now = realTime.now
      connections.removeAll { connection in
        let idle =
          !connection.session.isAuthenticated
          && (now - connection.lastActivity > idleTimeout
            || now - connection.acceptedAt > authenticationTimeout)
        if idle { connection.socket.close() }
        return idle
      }
      flushAndReap(&connections)
      lock.withLock { liveConnections = connections.count }
    }
  }

  /// Moves the events the backend published into every connection's outbox, in order.
  private func renderQueuedEvents(_ connections: inout [Connection]) {
    let events = lock.withLock {
      defer { queuedEvents = [] }
      return queuedEvents
    }
    for event in events {
      for index in connections.indices {
        if let bytes = connections[index].session.render(event) {
          connections[index].outbox += bytes
        }
      }
    }
  }

  private func acceptAll(_ connections: inout [Connection], buffer: inout [UInt8]) {
    // At most half the strangers' slots per pass: every stranger is read at least once (its
    // AUTHENTICATE, if it sent one) before newcomers can push it out; the rest wait in the
    // kernel's backlog for the next pass.
    for _ in 0..<max(1, maxUnauthenticated / 2) {
      guard let (socket, peer) = try? listening.accept() else { return }
      // The newest stranger gets the slot of the oldest one: the owner, connecting after a
      // flood of idle connections, is always let in to authenticate.
      if !makeRoomForAStranger(&connections, buffer: &buffer) {
        socket.close()
        continue
      }
      guard connections.count < maxConnections, (try? socket.setNonBlocking(true)) != nil else {
        socket.close()
        continue
      }
      connections.append(
        Connection(
          socket: socket, peer: peer,
          session: ControlSession(
            authentication: authentication, maximumCommandBytes: maximumCommandBytes,
            makeNonce: makeNonce),
          lastActivity: realTime.now, acceptedAt: realTime.now))
    }
  }

  /// When the strangers' slots are full, closes the oldest stranger that, read once more, is
  /// still unauthenticated (an owner whose AUTHENTICATE is waiting in its socket gets in
  /// instead of being evicted). False when no slot could be freed.
  private func makeRoomForAStranger(_ connections: inout [Connection], buffer: inout [UInt8])
    -> Bool
  {
    var strangers = connections.indices.filter { !connections[$0].session.isAuthenticated }
    guard strangers.count >= maxUnauthenticated else { return true }
    while let candidate = strangers.first {
      strangers.removeFirst()
      let alive = receive(&connections[candidate], buffer: &buffer)
      if alive && connections[candidate].session.isAuthenticated { continue }
      connections[candidate].socket.close()
      connections.remove(at: candidate)
      return true
    }
    return false
  }

  /// Reads what is there and runs it through the session; false when the peer is gone.
  private func receive(_ connection: inout Connection, buffer: inout [UInt8]) -> Bool {
    let count = buffer.withUnsafeMutableBytes {
      Glibc.recv(connection.socket.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
    }
    if count < 0 { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR }
    if count == 0 { return false }
    connection.lastActivity = realTime.now
    guard !connection.closeAfterFlush else { return true }
    var context = backend?.controlContext() ?? ControlContext()
    let output = connection.session.receive(buffer[0..<count], context: &context)
    connection.outbox += output.bytes
    if output.close { connection.closeAfterFlush = true }
    let delay = orconnStatusReplyDelay
    for record in output.commands {
      if delay > 0, record.keyword.uppercased() == "GETINFO",
        record.arguments.split(separator: " ").contains("orconn-status")
      {
        connection.holdUntil = realTime.now + delay
      }
      backend?.controlCommandHandled(record, peer: connection.peer)
    }
    for action in output.actions {
      switch action {
      case .setDisableNetwork(let disabled): backend?.setDisableNetwork(disabled)
      case .signal(let name): backend?.controlSignal(name)
      case .subscribe: break
      }
    }
    return true
  }

  /// Writes queued bytes without blocking; closes connections that are done or stalled.
  private func flushAndReap(_ connections: inout [Connection]) {
    let now = realTime.now
    for index in connections.indices.reversed() {
      var connection = connections[index]
      var alive = true
      while !connection.outbox.isEmpty && now >= connection.holdUntil {
        let sent = connection.outbox.withUnsafeBytes {
          Glibc.send(
            connection.socket.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
        }
        if sent > 0 {
          connection.outbox.removeFirst(sent)
          continue
        }
        if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { break }
        alive = false
        break
      }
      if connection.outbox.count > ControlPortListener.maximumOutbox { alive = false }
      if connection.closeAfterFlush && connection.outbox.isEmpty { alive = false }
      if alive {
        connections[index] = connection
      } else {
        connection.socket.close()
        connections.remove(at: index)
      }
    }
  }
}

/// Why the control port could not start.
public enum ControlPortError: Error, CustomStringConvertible, Sendable {
  case notLoopback(SocketAddress)
  case cookieFile(path: String, reason: String)

  public var description: String {
    switch self {
    case .notLoopback(let address):
      return "control port \(address): not a loopback address (127.0.0.0/8 or ::1)"
    case .cookieFile(let path, let reason):
      return "control auth cookie file \(path): \(reason)"
    }
  }
}
