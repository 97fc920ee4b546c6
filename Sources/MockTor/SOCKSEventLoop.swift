import FailClosedSupport
import Foundation
import SOCKS

/// One of the SOCKS listener's event-loop threads (epoll): it accepts from the shared listening
/// socket when the kernel wakes it (EPOLLEXCLUSIVE: one loop per connection) and serves what it
/// accepted, every handshake and every stream without toxics from connect to close, so
/// thousands of clients cost a descriptor each and no thread. A finished request goes where its
/// ``StreamRoute`` says: answered at once, relayed here (``LoopStream``), or handed to
/// `onRequest`, which runs it on a thread of its own (toxics, a wait for the bootstrap, an
/// upstream hook). A failed handshake gets its reply (tor's bytes) and is closed; a silent one
/// is closed after the timeout. Stopping closes every connection the loop holds and logs its
/// streams as closed by the mock.
final class SOCKSEventLoop: @unchecked Sendable {
  /// What every loop of a listener shares.
  struct Settings: Sendable {
    let policy: SOCKSServerPolicy
    let clock: any HarnessClock
    let handshakeTimeout: Double
    /// Handshakes this loop holds at most; beyond, the oldest is dropped.
    let maxPending: Int
    let context: SOCKSListener.StreamContext
    let route: SOCKSListener.Router
    let onRequest: SOCKSListener.RequestHandler
    let onReject: SOCKSListener.RejectHandler
  }

  private let socket: Socket
  private let name: String
  private let policy: SOCKSServerPolicy
  private let clock: any HarnessClock
  private let handshakeTimeout: Double
  private let maxPending: Int
  private let route: SOCKSListener.Router
  private let onRequest: SOCKSListener.RequestHandler
  private let onReject: SOCKSListener.RejectHandler
  private let context: SOCKSListener.StreamContext
  private let poll: EventPoll
  private let stop: EventLoopStop
  private let lock = NSLock()
  private var connectionCount = 0

  // The loop thread's own state.
  private var connections: [UInt64: Connection] = [:]
  private var handshakeCount = 0
  /// Handshakes by age, oldest first (ids of connections that moved on are skipped).
  private var handshakeOrder: [UInt64] = []
  private var handshakeOrderStart = 0
  private var nextID: UInt64 = 1
  /// Accepts asked for at the listener's next wake-up (see ``acceptSome()``).
  private var acceptLimit = 1

  private enum Connection {
    case handshake(Handshake)
    case stream(LoopStream)
  }

  private final class Handshake {
    let socket: Socket
    let fd: Int32
    let peer: SocketAddress?
    var handshake: SOCKSServerHandshake
    var buffer: [UInt8] = []
    let since: Double
    var readable = false
    var closing = false

    init(socket: Socket, peer: SocketAddress?, policy: SOCKSServerPolicy, since: Double) {
      self.socket = socket
      self.fd = socket.fd
      self.peer = peer
      self.handshake = SOCKSServerHandshake(policy: policy)
      self.since = since
    }
  }

  /// Tokens: the listener 0; a connection's client side `id << 1`, its destination side
  /// `id << 1 | 1`.
  private static let listenerToken: UInt64 = 0
  private static let scratchSize = 262_144
  private static let acceptBatch = 8
  /// Real seconds between sweeps for timeouts (and the longest a wait lasts).
  private static let sweepInterval = 0.1

  /// A loop serving `listener` (non-blocking, shared with the other loops, closed by its owner).
  init(listener: Socket, name: String, _ settings: Settings) throws {
    socket = listener
    self.name = name
    poll = try EventPoll(capacity: 512)
    stop = EventLoopStop(poll)
    try poll.add(listener.fd, [.readable, .exclusive], token: Self.listenerToken)
    policy = settings.policy
    clock = settings.clock
    handshakeTimeout = settings.handshakeTimeout
    maxPending = max(1, settings.maxPending)
    context = settings.context
    route = settings.route
    onRequest = settings.onRequest
    onReject = settings.onReject
  }

  /// Connections the loop holds: handshaking, and streams relayed on the loop.
  var currentConnections: Int { lock.withLock { connectionCount } }

  func start() {
    BlockingIO.detach(name) { [self] in
      loop()
      stop.loopEnded()
    }
  }

  /// Asks the loop to close everything and end; ``waitUntilStopped()`` waits for it.
  func requestStop() { stop.request() }

  /// Waits for the loop to end, then closes its epoll set.
  func waitUntilStopped() { stop.waitForEnd() }

  private func loop() {
    let scratch = UnsafeMutableRawBufferPointer.allocate(
      byteCount: Self.scratchSize, alignment: 16)
    defer {
      closeEverything()
      scratch.deallocate()
    }
    let realTime = MockTor.pollInterval
    var lastSweep = realTime.now
    while !stop.isRequested {
      do {
        try poll.wait(timeout: Self.sweepInterval) { token, events in
          handle(token, events, scratch)
        }
      } catch {
        realTime.sleepBlocking(seconds: 0.01)
      }
      let now = realTime.now
      if now - lastSweep >= Self.sweepInterval {
        sweep(realNow: now)
        lastSweep = now
      }
      let count = connections.count
      lock.withLock { connectionCount = count }
    }
  }

  private func handle(
    _ token: UInt64, _ events: EventPoll.Events, _ scratch: UnsafeMutableRawBufferPointer
  ) {
    if token == Self.listenerToken {
      acceptSome()
      return
    }
    let id = token >> 1
    switch connections[id] {
    case .handshake(let handshake):
      if !events.isDisjoint(with: [.peerClosedWriting, .hangUp, .error]) {
        handshake.closing = true
      }
      guard !events.isDisjoint(with: [.readable, .peerClosedWriting, .hangUp, .error]) else {
        return
      }
      handshake.readable = true
      service(id, handshake, scratch)
    case .stream(let stream):
      if let outcome = stream.handle(
        events, upstreamSide: token & 1 == 1, scratch: scratch, now: context.planTime)
      {
        end(id, stream, outcome)
      }
    case nil:
      return
    }
  }

  /// Accepts a few connections at a time: the kernel wakes an idle loop for the next ones, so a
  /// burst of clients spreads over the loops instead of landing on the first one awake. Each
  /// one non-blocking in the accept itself (accept4: one call where accept and fcntl took four).
  private func acceptSome() {
    let now = clock.now
    // As many as the last wake-up found queued, doubled, up to the batch: a trickle of clients
    // (one a wake-up) asks once, not twice, the second asking only to hear EAGAIN.
    let limit = acceptLimit
    acceptLimit = min(Self.acceptBatch, limit * 2)
    for _ in 0..<limit {
      do {
        guard let (client, peer) = try socket.acceptNonBlocking() else {
          acceptLimit = 1
          return
        }
        if handshakeCount >= maxPending { dropOldestHandshake() }
        let id = nextID
        nextID += 1
        let handshake = Handshake(socket: client, peer: peer, policy: policy, since: now)
        // Registered once for everything a relayed stream needs: no change when it becomes one.
        do {
          try poll.add(handshake.fd, LoopStream.interest, token: id << 1)
        } catch {
          client.close()
          continue
        }
        connections[id] = .handshake(handshake)
        handshakeCount += 1
        handshakeOrder.append(id)
      } catch let error as SystemError {
        if error.code == EMFILE || error.code == ENFILE, handshakeCount > 0 {
          // Out of descriptors: shed the oldest handshake rather than spin on accept.
          dropOldestHandshake()
          continue
        }
        return
      } catch {
        return
      }
    }
  }

  private func dropOldestHandshake() {
    while handshakeOrderStart < handshakeOrder.count {
      let id = handshakeOrder[handshakeOrderStart]
      handshakeOrderStart += 1
      if case .handshake(let oldest) = connections[id] {
        closeHandshake(id, oldest)
        break
      }
    }
    compactHandshakeOrder()
  }

  private func compactHandshakeOrder() {
    if handshakeOrderStart > 1024 && handshakeOrderStart * 2 > handshakeOrder.count {
      handshakeOrder.removeFirst(handshakeOrderStart)
      handshakeOrderStart = 0
    }
  }

  private func closeHandshake(_ id: UInt64, _ handshake: Handshake) {
    connections[id] = nil
    handshakeCount -= 1
    handshake.socket.close()
  }

  /// Leaves the handshake phase: the connection is closed, handed on or becomes a stream.
  private func leaveHandshake(_ id: UInt64) {
    connections[id] = nil
    handshakeCount -= 1
  }

  /// Reads what is available (into the loop's buffer, at most a handshake's worth at a time)
  /// and advances the handshake.
  private func service(
    _ id: UInt64, _ connection: Handshake, _ scratch: UnsafeMutableRawBufferPointer
  ) {
    let chunk = UnsafeMutableRawBufferPointer(rebasing: scratch[..<4096])
    while connection.readable {
      let count = Glibc.read(connection.fd, chunk.baseAddress, chunk.count)
      if count < 0 && errno == EINTR { continue }
      if count < 0 && errno == EAGAIN {
        connection.readable = false
        break
      }
      if count <= 0 {
        closeHandshake(id, connection)
        return
      }
      if count < chunk.count && !connection.closing { connection.readable = false }
      connection.buffer += UnsafeRawBufferPointer(rebasing: chunk[..<count])
      // Every SOCKS message is bounded; more than this without a decision is garbage.
      if connection.buffer.count > 8192 { break }
    }
    for _ in 0..<8 {
      let action = connection.handshake.handle(connection.buffer)
      connection.buffer.removeFirst(action.consumed)
      if !action.reply.isEmpty { _ = PendingBytes.sendNow(connection.fd, action.reply) }
      switch action.outcome {
      case .continueHandshake: continue
      case .needMoreInput:
        if connection.buffer.count > 4096 { closeHandshake(id, connection) }
        return
      case .finished(let request):
        leaveHandshake(id)
        dispatch(id, connection, request)
        return
      case .failed(let error):
        onReject(error, connection.peer)
        connection.socket.shutdownWrite()
        closeHandshake(id, connection)
        return
      }
    }
    closeHandshake(id, connection)
  }

  /// Sends a finished request where its route says.
  private func dispatch(_ id: UInt64, _ connection: Handshake, _ request: SOCKSRequest) {
    let now = context.planTime
    switch route(request) {
    case .answer(let reply, let outcome):
      _ = PendingBytes.sendNow(connection.fd, reply)
      connection.socket.close()
      log(outcome, request, connection.peer, started: now, bytesUp: 0, bytesDown: 0)
    case .thread:
      poll.remove(connection.fd)
      try? connection.socket.setNonBlocking(false)
      onRequest(connection.socket, request, connection.buffer, connection.peer)
    case .relay(let target):
      let configuration = context.configuration
      let stream: LoopStream
      do {
        stream = try LoopStream(
          client: connection.socket, clientReadable: connection.readable, request: request,
          early: connection.buffer, peer: connection.peer, target: target,
          personality: configuration.personality, now: now,
          connectDeadline: MockTor.pollInterval.now + configuration.connectTimeout)
      } catch {
        let outcome = LoopStream.connectFailure(
          error.code, client: connection.socket, request: request,
          personality: configuration.personality)
        connection.socket.close()
        log(outcome, request, connection.peer, started: now, bytesUp: 0, bytesDown: 0)
        return
      }
      do {
        try poll.add(stream.upstreamFD, LoopStream.interest, token: id << 1 | 1)
      } catch {
        stream.close()
        log(
          StreamOutcome(result: "connect failed: \(error)", reply: nil), request, connection.peer,
          started: now, bytesUp: 0, bytesDown: 0)
        return
      }
      connections[id] = .stream(stream)
    }
  }

  private func end(_ id: UInt64, _ stream: LoopStream, _ outcome: StreamOutcome) {
    connections[id] = nil
    stream.close()
    log(
      outcome, stream.request, stream.peer, started: stream.started, bytesUp: stream.bytesUp,
      bytesDown: stream.bytesDown)
  }

  private func log(
    _ outcome: StreamOutcome, _ request: SOCKSRequest, _ peer: SocketAddress?, started: Double,
    bytesUp: Int, bytesDown: Int
  ) {
    outcome.record(
      in: context.eventLog, request: request, peer: peer, started: started,
      now: context.planTime, bytesUp: bytesUp, bytesDown: bytesDown)
  }

  /// Closes handshakes past their timeout, connects past theirs and streams idle too long.
  private func sweep(realNow: Double) {
    let now = clock.now
    let planNow = context.planTime
    let idleLimit = context.configuration.streamIdleTimeout
    for (id, connection) in connections {
      switch connection {
      case .handshake(let handshake):
        if now - handshake.since > handshakeTimeout { closeHandshake(id, handshake) }
      case .stream(let stream):
        if let outcome = stream.expired(realNow: realNow, planNow: planNow, idleLimit: idleLimit) {
          end(id, stream, outcome)
        }
      }
    }
    if handshakeCount == 0 {
      handshakeOrder.removeAll(keepingCapacity: true)
      handshakeOrderStart = 0
    } else if handshakeOrder.count - handshakeOrderStart > 2 * handshakeCount + 1024 {
      // Under constant load some handshake is always pending, so the order list never
      // emptied and grew by one entry per connection: keep only the live ones, in order.
      handshakeOrder = handshakeOrder[handshakeOrderStart...].filter { id in
        if case .handshake = connections[id] { return true }
        return false
      }
      handshakeOrderStart = 0
    }
  }

  private func closeEverything() {
    for (id, connection) in connections {
      switch connection {
      case .handshake(let handshake): closeHandshake(id, handshake)
      case .stream(let stream): end(id, stream, stream.closedByMock)
      }
    }
    lock.withLock { connectionCount = 0 }
  }
}
