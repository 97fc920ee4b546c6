import FailClosedSupport
import Foundation
import SOCKS

/// A stream without toxics on the listener's event loop: a connect that does not block, the
/// success reply, then both directions copied with non-blocking reads and writes. Readiness is
/// edge-triggered: each side's "readable" and "writable" hold until a call returns EAGAIN (or
/// a read comes up short with no close pending). Bytes a side cannot take yet wait in the
/// stream's buffer, and the other side is not read meanwhile. Ends like the threaded relay:
/// the destination's close ends the stream, the client's is passed on.
final class LoopStream {
  enum Phase { case connecting, relaying }

  let client: Socket
  let upstream: Socket
  let clientFD: Int32
  let upstreamFD: Int32
  let request: SOCKSRequest
  let peer: SocketAddress?
  let target: SocketAddress
  /// Plan time the request was handed over, and of the last event.
  let started: Double
  var lastActivity: Double
  /// Real (monotonic) seconds by which the connect must complete.
  let connectDeadline: Double
  private(set) var phase = Phase.connecting
  private(set) var bytesUp = 0
  private(set) var bytesDown = 0
  private let personality: MockTorPersonality
  private var early: [UInt8]
  private let toUpstream = PendingBytes()
  private let toClient = PendingBytes()
  private var clientState = SideState(readable: true)
  private var upstreamState = SideState(readable: false)
  /// The client has not closed its side yet (its close is passed on to the destination).
  private var upOpen = true

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

  /// What the loop registers both sockets for.
  static let interest: EventPoll.Events = [
    .readable, .writable, .peerClosedWriting, .edgeTriggered,
  ]

  /// Starts a non-blocking connect to `target`; throws the errno of a connect that failed at
  /// once.
  init(
    client: Socket, clientReadable: Bool, request: SOCKSRequest, early: [UInt8],
    peer: SocketAddress?, target: SocketAddress, personality: MockTorPersonality, now: Double,
    connectDeadline: Double
  ) throws(SystemError) {
    let domain = target.family == .ipv4 ? AF_INET : AF_INET6
    let fd = Glibc.socket(
      domain,
      Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
      0)
    guard fd >= 0 else { throw SystemError("socket") }
    let socket = Socket(adopting: fd)
    let result = target.withSockAddr { Glibc.connect(fd, $0, $1) }
    if result != 0 && errno != EINPROGRESS {
      let error = SystemError("connect(\(target))")
      socket.close()
      throw error
    }
    self.client = client
    self.clientFD = client.fd
    self.upstream = socket
    self.upstreamFD = fd
    self.request = request
    self.early = early
    self.peer = peer
    self.target = target
    self.personality = personality
    self.started = now
    self.lastActivity = now
    self.connectDeadline = connectDeadline
    clientState.readable = clientReadable
    clientState.writable = true
  }

  /// Handles events on one side; the outcome once the stream ended (the loop then closes it).
  func handle(
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
      result: "closed by mock", reply: phase == .relaying ? .succeeded : nil,
      targetAddress: phase == .relaying ? target : nil)
  }

  /// A connect past its deadline, or a relay silent both ways past the idle limit.
  func expired(realNow: Double, planNow: Double, idleLimit: Double) -> StreamOutcome? {
    switch phase {
    case .connecting:
      return realNow > connectDeadline ? connectFailed(ETIMEDOUT) : nil
    case .relaying:
      return planNow - lastActivity > idleLimit ? ended("idle timeout") : nil
    }
  }

  /// The connect's failure: its reply to the client (best effort: a client that does not read
  /// it loses it), and the outcome.
  static func connectFailure(
    _ code: Int32, client: Socket, request: SOCKSRequest, personality: MockTorPersonality
  ) -> StreamOutcome {
    let reply = StreamAnswers.connectFailureReply(code, personality)
    _ = PendingBytes.sendNow(client.fd, request.reply(reply))
    return StreamOutcome(
      result: "connect failed: \(SystemError("connect", code: code).symbol)", reply: reply,
      target: request.address.description)
  }

  func close() {
    upstream.close()
    client.close()
  }

  // MARK: private

  private func connectFailed(_ code: Int32) -> StreamOutcome {
    Self.connectFailure(code, client: client, request: request, personality: personality)
  }

  private func ended(_ result: String) -> StreamOutcome {
    StreamOutcome(result: result, reply: .succeeded, targetAddress: target)
  }

  /// The connect is done: it failed if the wake-up said error or hang-up (its errno is then
  /// read), else it succeeded (writable alone means connected: no call needed to ask).
  private func finishConnect(failed: Bool) -> StreamOutcome? {
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
    if code == 0, upstream.localPort == target.port, upstream.localAddress == target {
      code = ECONNREFUSED
    }
    if code != 0 { return connectFailed(code) }
    phase = .relaying
    // Sent from the reply's own bytes; only what the client does not take is kept.
    let reply = request.reply(.succeeded)
    let sent = reply.withUnsafeBytes { bytes in
      toClient.send(clientFD, UnsafeMutableRawPointer(mutating: bytes.baseAddress!), bytes.count)
    }
    switch sent {
    case .failed: return StreamOutcome(result: "client gone before reply", reply: .succeeded)
    case .blocked: clientState.writable = false
    case .done: break
    }
    if !early.isEmpty {
      bytesUp += early.count
      toUpstream.append(early)
      early = []
    }
    return nil
  }

  /// Moves bytes both ways until neither side can make progress.
  private func pump(_ scratch: UnsafeMutableRawBufferPointer) -> StreamOutcome? {
    while true {
      var progressed = false
      // Towards the destination.
      if !toUpstream.isEmpty && upstreamState.writable {
        let before = toUpstream.count
        switch toUpstream.flush(upstreamFD) {
        case .failed: return ended("destination closed")
        case .blocked: upstreamState.writable = false
        case .done: break
        }
        progressed = progressed || toUpstream.count < before
      }
      if upOpen && clientState.readable && toUpstream.isEmpty && upstreamState.writable {
        let (n, size, result) = Self.move(clientFD, upstreamFD, toUpstream, scratch)
        if n > 0 {
          bytesUp += n
          if n < size && !clientState.closing { clientState.readable = false }
          switch result {
          case .failed: return ended("destination closed")
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
        case .failed: return ended("client closed")
        case .blocked: clientState.writable = false
        case .done: break
        }
        bytesDown += before - toClient.count
        progressed = progressed || toClient.count < before
      }
      if upstreamState.readable && toClient.isEmpty && clientState.writable {
        let (n, size, result) = Self.move(upstreamFD, clientFD, toClient, scratch)
        if n > 0 {
          if n < size && !upstreamState.closing { upstreamState.readable = false }
          switch result {
          case .failed: return ended("client closed")
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
          return ended(upOpen ? "destination closed" : "closed")
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
    _ source: Int32, _ sink: Int32, _ pending: PendingBytes,
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

/// Bytes one side of a stream could not take yet, sent from where the last send stopped. A
/// stream whose destination (or client) once did not take a whole read gets a bulk buffer here
/// and reads into it from then on, so a long transfer is not copied twice; short streams keep
/// only the few bytes they queue (the reply).
final class PendingBytes {
  enum Result { case done, blocked, failed }

  static let bulkCapacity = 262_144
  private var base: UnsafeMutableRawPointer?
  private var capacity = 0
  private var start = 0
  private var end = 0

  deinit { base?.deallocate() }

  var isEmpty: Bool { start == end }
  var count: Int { end - start }
  /// Reads go straight into this buffer (see ``fill(from:)``).
  var readsInPlace: Bool { capacity >= Self.bulkCapacity }
  var readSize: Int { capacity }

  func append(_ bytes: [UInt8]) {
    guard !bytes.isEmpty else { return }
    bytes.withUnsafeBytes { keep($0.baseAddress!, $0.count, capacity: count + $0.count) }
  }

  /// Reads from `fd` into the empty buffer; what read(2) returned.
  func fill(from fd: Int32) -> Int {
    start = 0
    end = 0
    let n = Glibc.read(fd, base, capacity)
    if n > 0 { end = n }
    return n
  }

  /// Sends what is pending; `.blocked` when the socket's buffer is full.
  func flush(_ fd: Int32) -> Result {
    while !isEmpty {
      let sent = Glibc.send(fd, base! + start, count, Int32(MSG_NOSIGNAL))
      if sent < 0 {
        if errno == EINTR { continue }
        return errno == EAGAIN ? .blocked : .failed
      }
      start += sent
    }
    start = 0
    end = 0
    return .done
  }

  /// Sends `length` bytes from `bytes` (nothing may be pending); what the socket does not take
  /// is kept, in a bulk buffer.
  func send(_ fd: Int32, _ bytes: UnsafeMutableRawPointer, _ length: Int) -> Result {
    var sent = 0
    while sent < length {
      let n = Glibc.send(fd, bytes + sent, length - sent, Int32(MSG_NOSIGNAL))
      if n < 0 {
        if errno == EINTR { continue }
        guard errno == EAGAIN else { return .failed }
        keep(bytes + sent, length - sent, capacity: Self.bulkCapacity)
        return .blocked
      }
      sent += n
    }
    return .done
  }

  /// Appends `length` bytes, the buffer holding at least `capacity` (and what it holds).
  private func keep(_ bytes: UnsafeRawPointer, _ length: Int, capacity wanted: Int) {
    let pending = count
    if start > 0 {
      if pending > 0 { memmove(base!, base! + start, pending) }
      start = 0
      end = pending
    }
    let needed = max(wanted, pending + length)
    if needed > capacity {
      let grown = UnsafeMutableRawPointer.allocate(byteCount: needed, alignment: 16)
      if pending > 0 { grown.copyMemory(from: base!, byteCount: pending) }
      base?.deallocate()
      base = grown
      capacity = needed
    }
    (base! + end).copyMemory(from: bytes, byteCount: length)
    end += length
  }

  /// One send that does not wait, for replies small enough to fit an empty socket buffer.
  static func sendNow(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes {
      Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) == $0.count
    }
  }
}
