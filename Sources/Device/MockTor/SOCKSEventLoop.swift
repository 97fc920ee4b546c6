import FailClosedSupport
import Foundation
import SOCKS
import Synchronization

/// One of the SOCKS listener's event-loop threads (epoll): it accepts from the shared listening
/// socket when the kernel wakes it (EPOLLEXCLUSIVE: one loop per connection) and serves what it
/// accepted, every handshake and every stream without toxics from connect to close, so
/// thousands of clients cost a descriptor each and no thread. A finished request goes where its
/// ``StreamRoute`` says: answered at once, relayed here (``LoopConnection``), or handed to
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
  /// Published by the loop at every turn: an atomic, not a lock.
  private let connectionCount = Atomic(0)

  // The loop thread's own state: no other thread touches it, so it goes without the dynamic
  // exclusivity checks (a thread-local lookup at every access).
  @exclusivity(unchecked) private var connections = ConnectionSlab<LoopConnection>(capacity: 256)
  @exclusivity(unchecked) private var handshakeCount = 0
  /// Handshakes by age, oldest first (keys of connections that moved on are skipped).
  @exclusivity(unchecked) private var handshakeOrder: [Key] = []
  @exclusivity(unchecked) private var handshakeOrderStart = 0
  /// Handshake bytes as read, for whichever connection is being read (see
  /// ``LoopConnection/readHandshake(_:chunk:input:)``).
  @exclusivity(unchecked) private var input: [UInt8] = []
  /// Accepts asked for at the listener's next wake-up (see ``acceptSome()``).
  @exclusivity(unchecked) private var acceptLimit = 1
  /// Plan time, read once per wake-up (see ``planNow``).
  @exclusivity(unchecked) private var wakeUpPlanTime: Double?

  private typealias Key = ConnectionSlab<LoopConnection>.Key

  /// Tokens: the listener 0; a connection's sides as its key makes them (client 0, destination
  /// 1), never 0.
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
  var currentConnections: Int { connectionCount.load(ordering: .relaxed) }

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
        // The next wake-up, or a sweep, reads the clock afresh.
        wakeUpPlanTime = nil
      } catch {
        realTime.sleepBlocking(seconds: 0.01)
      }
      let now = realTime.now
      if now - lastSweep >= Self.sweepInterval {
        sweep(realNow: now)
        lastSweep = now
      }
      connectionCount.store(connections.count, ordering: .relaxed)
    }
  }

  /// Plan time for what this wake-up reported: read once, as its events happened together
  /// (the clock is a call through an existential, and the system's clock a call more).
  private var planNow: Double {
    if let time = wakeUpPlanTime { return time }
    let time = context.planTime
    wakeUpPlanTime = time
    return time
  }

  private func handle(
    _ token: UInt64, _ events: EventPoll.Events, _ scratch: UnsafeMutableRawBufferPointer
  ) {
    if token == Self.listenerToken {
      acceptSome()
      return
    }
    let key = Key(token: token)
    // Nil for an event of a connection that ended earlier in this wake-up.
    guard let connection = connections.at(key) else { return }
    guard connection.pointee.phase == .handshake else {
      if let outcome = connection.pointee.handle(
        events, upstreamSide: token & 1 == 1, scratch: scratch, now: planNow)
      {
        end(key, outcome)
      }
      return
    }
    let chunk = UnsafeMutableRawBufferPointer(rebasing: scratch[..<LoopConnection.handshakeLimit])
    switch connection.pointee.readHandshake(events, chunk: chunk, input: &input) {
    case .waiting: return
    case .close: closeHandshake(key)
    case .failed(let error):
      onReject(error, connection.pointee.peer)
      _ = Glibc.shutdown(connection.pointee.clientFD, Int32(SHUT_WR))
      closeHandshake(key)
    case .finished(let request):
      handshakeCount -= 1
      dispatch(key, connection, request)
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
    var peer = sockaddr_storage()
    for _ in 0..<limit {
      do {
        guard let fd = try socket.acceptDescriptorNonBlocking(peer: &peer) else {
          acceptLimit = 1
          return
        }
        if handshakeCount >= maxPending { dropOldestHandshake() }
        let key = connections.insert(
          LoopConnection(clientFD: fd, peer: peer, policy: policy, since: now))
        // Registered once for everything a relayed stream needs: no change when it becomes one.
        do {
          try poll.add(fd, LoopConnection.interest, token: key.token(side: 0))
        } catch {
          connections.remove(key).close()
          continue
        }
        handshakeCount += 1
        handshakeOrder.append(key)
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

  private func isHandshake(_ key: Key) -> Bool {
    connections.at(key)?.pointee.phase == .handshake
  }

  private func dropOldestHandshake() {
    while handshakeOrderStart < handshakeOrder.count {
      let key = handshakeOrder[handshakeOrderStart]
      handshakeOrderStart += 1
      if isHandshake(key) {
        closeHandshake(key)
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

  private func closeHandshake(_ key: Key) {
    handshakeCount -= 1
    connections.at(key)?.pointee.close()
    connections.discard(key)
  }

  /// Sends a finished request where its route says (the connection has left the handshake).
  private func dispatch(
    _ key: Key, _ connection: UnsafeMutablePointer<LoopConnection>, _ request: SOCKSRequest
  ) {
    let now = planNow
    switch route(request) {
    case .answer(let reply, let outcome):
      let answered = connections.remove(key)
      _ = PendingBytes.sendNow(answered.clientFD, reply)
      answered.close()
      log(outcome, request, answered.peer, started: now, bytesUp: 0, bytesDown: 0)
    case .thread:
      let handed = connections.remove(key)
      poll.remove(handed.clientFD)
      let client = Socket(adopting: handed.clientFD)
      try? client.setNonBlocking(false)
      onRequest(client, request, handed.unread, handed.peer)
    case .relay(let target):
      let configuration = context.configuration
      do {
        try connection.pointee.startStream(
          request, to: target, personality: configuration.personality, now: now,
          connectDeadline: MockTor.pollInterval.now + configuration.connectTimeout)
      } catch {
        let failed = connections.remove(key)
        let outcome = LoopConnection.connectFailure(
          error.code, clientFD: failed.clientFD, request: request,
          personality: configuration.personality)
        failed.close()
        log(outcome, request, failed.peer, started: now, bytesUp: 0, bytesDown: 0)
        return
      }
      do {
        try poll.add(
          connection.pointee.upstreamFD, LoopConnection.interest, token: key.token(side: 1))
      } catch {
        let failed = connections.remove(key)
        failed.close()
        log(
          StreamOutcome(result: .connectFailed("\(error)"), reply: nil), request, failed.peer,
          started: now, bytesUp: 0, bytesDown: 0)
      }
    }
  }

  /// Closes a stream and logs how it ended.
  private func end(_ key: Key, _ outcome: StreamOutcome) {
    guard let stream = connections.at(key) else { return }
    stream.pointee.close()
    if let request = stream.pointee.request {
      log(
        outcome, request, stream.pointee.peer, started: stream.pointee.started,
        bytesUp: stream.pointee.bytesUp, bytesDown: stream.pointee.bytesDown)
    }
    connections.discard(key)
  }

  private func log(
    _ outcome: StreamOutcome, _ request: SOCKSRequest, _ peer: SocketAddress?, started: Double,
    bytesUp: Int, bytesDown: Int
  ) {
    outcome.record(
      in: context.eventLog, request: request, peer: peer, started: started,
      now: planNow, bytesUp: bytesUp, bytesDown: bytesDown)
  }

  /// Closes handshakes past their timeout, connects past theirs and streams idle too long.
  private func sweep(realNow: Double) {
    let now = clock.now
    let planNow = context.planTime
    let idleLimit = context.configuration.streamIdleTimeout
    for key in connections.keys() {
      guard let connection = connections.at(key) else { continue }
      if connection.pointee.phase == .handshake {
        if now - connection.pointee.since > handshakeTimeout { closeHandshake(key) }
      } else if let outcome = connection.pointee.expired(
        realNow: realNow, planNow: planNow, idleLimit: idleLimit)
      {
        end(key, outcome)
      }
    }
    if handshakeCount == 0 {
      handshakeOrder.removeAll(keepingCapacity: true)
      handshakeOrderStart = 0
    } else if handshakeOrder.count - handshakeOrderStart > 2 * handshakeCount + 1024 {
      // Under constant load some handshake is always pending, so the order list never
      // emptied and grew by one entry per connection: keep only the live ones, in order.
      handshakeOrder = handshakeOrder[handshakeOrderStart...].filter(isHandshake)
      handshakeOrderStart = 0
    }
  }

  private func closeEverything() {
    for key in connections.keys() {
      guard let connection = connections.at(key) else { continue }
      if connection.pointee.phase == .handshake {
        closeHandshake(key)
      } else {
        end(key, connection.pointee.closedByMock)
      }
    }
    connectionCount.store(0, ordering: .relaxed)
  }
}
