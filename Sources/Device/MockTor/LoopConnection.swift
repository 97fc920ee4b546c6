import FailClosedSupport
import Foundation
import SOCKS

/// One client of the SOCKS listener's event loop, from accept to close, kept in place in the
/// loop's ``ConnectionSlab``: its handshake, then, for a stream without toxics, a connect that
/// does not block, the success reply, and both directions copied with non-blocking reads and
/// writes. Readiness is edge-triggered: each side's "readable" and "writable" hold until a call
/// returns EAGAIN (or a read comes up short with no close pending). Bytes a side cannot take
/// yet wait in the connection's buffer, and the other side is not read meanwhile. Ends like the
/// threaded relay: the destination's close ends the stream, the client's is passed on.
///
/// It holds bare descriptors (closed by ``close()``) and the client's address as accept wrote
/// it (made into an address only for a record or a hand-over), so a connection allocates
/// nothing of its own unless bytes wait.
struct LoopConnection: ~Copyable {
  enum Phase { case handshake, connecting, relaying }

  /// What reading the handshake came to.
  enum HandshakeStep {
    /// The next message is not all here yet.
    case waiting
    /// The client closed, or sent more than any SOCKS message: close without a word.
    case close
    case finished(SOCKSRequest)
    /// Refused, the reply (tor's bytes) sent: the loop reports it and closes.
    case failed(SOCKSError)
  }

  struct SideState {
    var readable: Bool
    var writable = false
    /// EPOLLRDHUP or a hang-up seen: a short read does not mean drained, the close is queued.
    var closing = false

    mutating func note(_ events: EventPoll.Events) {
      if !events.isDisjoint(with: [.peerClosedWriting, .hangUp, .error]) { closing = true }
      if !events.isDisjoint(with: [.readable, .peerClosedWriting, .hangUp, .error]) {
        readable = true
      }
      if !events.isDisjoint(with: [.writable, .hangUp, .error]) { writable = true }
    }
  }

  /// What the loop registers both sockets for, once: no change when a handshake becomes a
  /// stream.
  static let interest: EventPoll.Events = [
    .readable, .writable, .peerClosedWriting, .edgeTriggered,
  ]
  /// Every SOCKS message is bounded: more than this unread without a decision is garbage.
  static let handshakeLimit = 4096

  // What every event touches comes first, to share the first cache lines: with a thousand
  // clients, reaching a connection's slot is the loop's one cache miss per event.
  let clientFD: Int32
  private(set) var upstreamFD: Int32 = -1
  private(set) var phase = Phase.handshake
  private var clientState = SideState(readable: false)
  private var upstreamState = SideState(readable: false)
  /// The client has not closed its side yet (its close is passed on to the destination).
  private var upOpen = true
  /// Plan time of the last event.
  private var lastActivity = 0.0
  private(set) var bytesUp = 0
  private(set) var bytesDown = 0
  private var toUpstream = PendingBytes()
  private var toClient = PendingBytes()
  /// Harness-clock time of the accept: the handshake's timeout counts from it.
  let since: Double
  private var handshake: SOCKSServerHandshake
  /// Bytes read and not consumed: the start of a message split across reads, then the
  /// client's early bytes (sent before the reply; passed on once connected).
  private(set) var unread: [UInt8] = []
  /// The stream's, set when the request is relayed.
  private(set) var request: SOCKSRequest?
  private var target: SocketAddress?
  /// Plan time the request was handed over.
  private(set) var started = 0.0
  /// Real (monotonic) seconds by which the connect must complete.
  private var connectDeadline = 0.0
  private var personality = MockTorPersonality.ctor
  /// The client's address as accept wrote it, in the room an IPv6 one takes (an IPv4 one
  /// takes less): a fifth of a sockaddr_storage, in a slot every event reaches.
  private let peerName: sockaddr_in6

  init(clientFD: Int32, peer: sockaddr_storage, policy: SOCKSServerPolicy, since: Double) {
    self.clientFD = clientFD
    self.peerName = withUnsafeBytes(of: peer) { $0.loadUnaligned(as: sockaddr_in6.self) }
    self.handshake = SOCKSServerHandshake(policy: policy)
    self.since = since
  }

  /// Where the client connected from.
  var peer: SocketAddress? {
    var storage = sockaddr_storage()
    withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: peerName, as: sockaddr_in6.self) }
    return SocketAddress(storage: storage)
  }

  // MARK: handshake

  /// Reads what is available (through `chunk`) and advances the handshake, sending its
  /// replies. `input` is the loop's buffer for it, shared by all its connections: only the
  /// bytes left over move into the connection, so a handshake read whole allocates nothing.
  mutating func readHandshake(
    _ events: EventPoll.Events, chunk: UnsafeMutableRawBufferPointer, input: inout [UInt8]
  ) -> HandshakeStep {
    if !events.isDisjoint(with: [.peerClosedWriting, .hangUp, .error]) {
      clientState.closing = true
    }
    guard !events.isDisjoint(with: [.readable, .peerClosedWriting, .hangUp, .error]) else {
      return .waiting
    }
    clientState.readable = true
    input.removeAll(keepingCapacity: true)
    if !unread.isEmpty {
      input += unread
      unread = []
    }
    while clientState.readable {
      let count = Glibc.read(clientFD, chunk.baseAddress, chunk.count)
      if count < 0 && errno == EINTR { continue }
      if count < 0 && errno == EAGAIN {
        clientState.readable = false
        break
      }
      if count <= 0 { return .close }
      if count < chunk.count && !clientState.closing { clientState.readable = false }
      input += UnsafeRawBufferPointer(rebasing: chunk[..<count])
      if input.count > 2 * Self.handshakeLimit { break }
    }
    for _ in 0..<8 {
      let action = handshake.handle(input)
      input.removeFirst(action.consumed)
      if !action.reply.isEmpty { _ = PendingBytes.sendNow(clientFD, action.reply) }
      switch action.outcome {
      case .continueHandshake: continue
      case .needMoreInput:
        if input.count > Self.handshakeLimit { return .close }
        if !input.isEmpty { unread = input }
        return .waiting
      case .finished(let request):
        if !input.isEmpty { unread = input }
        return .finished(request)
      case .failed(let error):
        return .failed(error)
      }
    }
    return .close
  }

  // MARK: stream

  /// Turns the finished handshake into a stream to `target`: starts a connect that does not
  /// block; throws the errno of a connect that failed at once.
  mutating func startStream(
    _ request: SOCKSRequest, to target: SocketAddress, personality: MockTorPersonality,
    now: Double, connectDeadline: Double
  ) throws(SystemError) {
    let domain = target.family == .ipv4 ? AF_INET : AF_INET6
    let fd = Glibc.socket(
      domain,
      Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
      0)
    guard fd >= 0 else { throw SystemError("socket") }
    let result = target.withSockAddr { Glibc.connect(fd, $0, $1) }
    if result != 0 && errno != EINPROGRESS {
      let error = SystemError("connect(\(target))")
      Glibc.close(fd)
      throw error
    }
    upstreamFD = fd
    phase = .connecting
    self.request = request
    self.target = target
    self.personality = personality
    started = now
    lastActivity = now
    self.connectDeadline = connectDeadline
    clientState.writable = true
  }

  /// Handles events on one side of a stream; the outcome once it ended (the loop then closes
  /// it).
  mutating func handle(
    _ events: EventPoll.Events, upstreamSide: Bool, scratch: UnsafeMutableRawBufferPointer,
    now: Double
  ) -> StreamOutcome? {
    lastActivity = now
    if upstreamSide { upstreamState.note(events) } else { clientState.note(events) }
    if phase == .connecting {
      guard upstreamSide, upstreamState.writable else { return nil }
      if let failure = finishConnect(failed: !events.isDisjoint(with: [.error, .hangUp])) {
        return failure
      }
    }
    return pump(scratch)
  }

  /// The outcome of a stream the mock ends (stop, crash).
  var closedByMock: StreamOutcome {
    StreamOutcome(
      result: .closedByMock, reply: phase == .relaying ? .succeeded : nil,
      targetAddress: phase == .relaying ? target : nil)
  }

  /// A connect past its deadline, or a relay silent both ways past the idle limit.
  func expired(realNow: Double, planNow: Double, idleLimit: Double) -> StreamOutcome? {
    switch phase {
    case .handshake: return nil
    case .connecting:
      return realNow > connectDeadline ? connectFailed(ETIMEDOUT) : nil
    case .relaying:
      return planNow - lastActivity > idleLimit ? ended(.idleTimeout) : nil
    }
  }

  /// The connect's failure: its reply to the client (best effort: a client that does not read
  /// it loses it), and the outcome.
  static func connectFailure(
    _ code: Int32, clientFD: Int32, request: SOCKSRequest, personality: MockTorPersonality
  ) -> StreamOutcome {
    let reply = StreamAnswers.connectFailureReply(code, personality)
    _ = PendingBytes.sendNow(clientFD, request.reply(reply))
    return StreamOutcome(
      result: .connectFailed(SystemError("connect", code: code).symbol), reply: reply,
      target: request.address.description)
  }

  /// Closes both descriptors (the client's alone before a stream).
  func close() {
    if upstreamFD >= 0 { Glibc.close(upstreamFD) }
    Glibc.close(clientFD)
  }

  // MARK: private

  private func connectFailed(_ code: Int32) -> StreamOutcome {
    guard let request else { return StreamOutcome(result: .connectFailed(nil), reply: nil) }
    return Self.connectFailure(code, clientFD: clientFD, request: request, personality: personality)
  }

  private func ended(_ result: StreamResult) -> StreamOutcome {
    StreamOutcome(result: result, reply: .succeeded, targetAddress: target)
  }

  /// The connect is done: it failed if the wake-up said error or hang-up (its errno is then
  /// read), else it succeeded (writable alone means connected: no call needed to ask).
  private mutating func finishConnect(failed: Bool) -> StreamOutcome? {
    var code: Int32 = 0
    if failed {
      var length = socklen_t(MemoryLayout<Int32>.size)
      if getsockopt(upstreamFD, SOL_SOCKET, SO_ERROR, &code, &length) != 0 { code = errno }
      // Hung up without an error left to read: the destination refused or reset it.
      if code == 0 { code = ECONNRESET }
    }
    // A connect to a port nobody listens on can pick that very port as its source and connect
    // to itself (see Socket.connect): refused, as no listener answered.
    // The port first: it needs no address made, and differs on every other connect.
    if code == 0, let target, Socket.localPort(of: upstreamFD) == target.port,
      Socket.localAddress(of: upstreamFD) == target
    {
      code = ECONNREFUSED
    }
    if code != 0 { return connectFailed(code) }
    guard let request else { return ended(.closed) }
    phase = .relaying
    // Sent from the reply's own bytes; only what the client does not take is kept.
    let reply = request.reply(.succeeded)
    let sent = reply.withUnsafeBytes { toClient.send(clientFD, $0.baseAddress!, $0.count) }
    switch sent {
    case .failed: return StreamOutcome(result: .clientGoneBeforeReply, reply: .succeeded)
    case .blocked: clientState.writable = false
    case .done: break
    }
    if !unread.isEmpty {
      bytesUp += unread.count
      toUpstream.append(unread)
      unread = []
    }
    return nil
  }

  /// Moves bytes both ways until neither side can make progress.
  private mutating func pump(_ scratch: UnsafeMutableRawBufferPointer) -> StreamOutcome? {
    while true {
      var progressed = false
      // Towards the destination.
      if !toUpstream.isEmpty && upstreamState.writable {
        let before = toUpstream.count
        switch toUpstream.flush(upstreamFD) {
        case .failed: return ended(.destinationClosed)
        case .blocked: upstreamState.writable = false
        case .done: break
        }
        progressed = progressed || toUpstream.count < before
      }
      if upOpen && clientState.readable && toUpstream.isEmpty && upstreamState.writable {
        let (n, size, result) = Self.move(clientFD, upstreamFD, &toUpstream, scratch)
        if n > 0 {
          bytesUp += n
          if n < size && !clientState.closing { clientState.readable = false }
          switch result {
          case .failed: return ended(.destinationClosed)
          case .blocked: upstreamState.writable = false
          case .done: break
          }
          progressed = true
        } else if n < 0 && (errno == EAGAIN || errno == EINTR) {
          if errno == EAGAIN { clientState.readable = false }
        } else {
          upOpen = false
          _ = Glibc.shutdown(upstreamFD, Int32(SHUT_WR))
          progressed = true
        }
      }
      // Towards the client.
      if !toClient.isEmpty && clientState.writable {
        let before = toClient.count
        switch toClient.flush(clientFD) {
        case .failed: return ended(.clientClosed)
        case .blocked: clientState.writable = false
        case .done: break
        }
        bytesDown += before - toClient.count
        progressed = progressed || toClient.count < before
      }
      if upstreamState.readable && toClient.isEmpty && clientState.writable {
        let (n, size, result) = Self.move(upstreamFD, clientFD, &toClient, scratch)
        if n > 0 {
          if n < size && !upstreamState.closing { upstreamState.readable = false }
          switch result {
          case .failed: return ended(.clientClosed)
          case .blocked: clientState.writable = false
          case .done: break
          }
          bytesDown += n - toClient.count
          progressed = true
        } else if n < 0 && (errno == EAGAIN || errno == EINTR) {
          if errno == EAGAIN { upstreamState.readable = false }
        } else {
          // The close that follows sends the client its FIN. Shut down first only while the
          // client may still have sent bytes not read: a close with bytes unread resets the
          // connection instead, and the FIN must go first (once its close was read, no byte
          // is left to read).
          if upOpen { _ = Glibc.shutdown(clientFD, Int32(SHUT_WR)) }
          return ended(upOpen ? .destinationClosed : .closed)
        }
      }
      if !progressed { return nil }
    }
  }

  /// Reads once from `source` and passes it on to `sink`: into `pending` itself once it holds a
  /// bulk buffer (no copy of what `sink` does not take), else into the loop's scratch buffer,
  /// keeping what `sink` does not take. The bytes read (errno set when negative), the most that
  /// could have been read, and how the send went.
  private static func move(
    _ source: Int32, _ sink: Int32, _ pending: inout PendingBytes,
    _ scratch: UnsafeMutableRawBufferPointer
  ) -> (Int, Int, PendingBytes.Result) {
    if pending.readsInPlace {
      let n = pending.fill(from: source)
      return n > 0 ? (n, pending.readSize, pending.flush(sink)) : (n, pending.readSize, .done)
    }
    let n = Glibc.read(source, scratch.baseAddress, scratch.count)
    guard n > 0 else { return (n, scratch.count, .done) }
    return (n, scratch.count, pending.send(sink, scratch.baseAddress!, n))
  }
}
