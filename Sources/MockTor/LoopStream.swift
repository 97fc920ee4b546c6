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
  private var toUpstream = PendingBytes()
  private var toClient = PendingBytes()
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
      if let failure = finishConnect() { return failure }
    }
    return pump(scratch)
  }

  /// The outcome of a stream the mock ends (stop, crash).
  var closedByMock: StreamOutcome {
    StreamOutcome(
      result: "closed by mock", reply: phase == .relaying ? .succeeded : nil,
      target: phase == .relaying ? target.description : nil)
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
    StreamOutcome(result: result, reply: .succeeded, target: target.description)
  }

  private func finishConnect() -> StreamOutcome? {
    var code: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    if getsockopt(upstreamFD, SOL_SOCKET, SO_ERROR, &code, &length) != 0 { code = errno }
    // A connect to a port nobody listens on can pick that very port as its source and connect
    // to itself (see Socket.connect): refused, as no listener answered.
    if code == 0, upstream.localAddress == target { code = ECONNREFUSED }
    if code != 0 { return connectFailed(code) }
    phase = .relaying
    toClient.append(request.reply(.succeeded))
    switch toClient.flush(clientFD) {
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
        let n = Glibc.read(clientFD, scratch.baseAddress, scratch.count)
        if n > 0 {
          bytesUp += n
          if n < scratch.count && !clientState.closing { clientState.readable = false }
          switch toUpstream.send(upstreamFD, scratch.baseAddress!, n) {
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
        let n = Glibc.read(upstreamFD, scratch.baseAddress, scratch.count)
        if n > 0 {
          if n < scratch.count && !upstreamState.closing { upstreamState.readable = false }
          switch toClient.send(clientFD, scratch.baseAddress!, n) {
          case .failed: return ended("client closed")
          case .blocked: clientState.writable = false
          case .done: break
          }
          bytesDown += n - toClient.count
          progressed = true
        } else if n < 0 && (errno == EAGAIN || errno == EINTR) {
          if errno == EAGAIN { upstreamState.readable = false }
        } else {
          _ = Glibc.shutdown(clientFD, Int32(SHUT_WR))
          return ended(upOpen ? "destination closed" : "closed")
        }
      }
      if !progressed { return nil }
    }
  }
}

/// Bytes one side of a stream could not take yet, sent from where the last send stopped.
struct PendingBytes {
  enum Result { case done, blocked, failed }

  private var storage: [UInt8] = []
  private var offset = 0

  var isEmpty: Bool { offset == storage.count }
  var count: Int { storage.count - offset }

  mutating func append(_ bytes: [UInt8]) {
    if isEmpty {
      storage.removeAll(keepingCapacity: true)
      offset = 0
    }
    storage += bytes
  }

  /// Sends what is pending; `.blocked` when the socket's buffer is full.
  mutating func flush(_ fd: Int32) -> Result {
    while !isEmpty {
      let sent = storage.withUnsafeBytes {
        Glibc.send(fd, $0.baseAddress! + offset, count, Int32(MSG_NOSIGNAL))
      }
      if sent < 0 {
        if errno == EINTR { continue }
        return errno == EAGAIN ? .blocked : .failed
      }
      offset += sent
    }
    storage.removeAll(keepingCapacity: true)
    offset = 0
    return .done
  }

  /// Sends `count` bytes from `bytes` (nothing may be pending); what the socket does not take
  /// is kept.
  mutating func send(_ fd: Int32, _ bytes: UnsafeMutableRawPointer, _ length: Int) -> Result {
    var sent = 0
    while sent < length {
      let n = Glibc.send(fd, bytes + sent, length - sent, Int32(MSG_NOSIGNAL))
      if n < 0 {
        if errno == EINTR { continue }
        guard errno == EAGAIN else { return .failed }
        storage.removeAll(keepingCapacity: true)
        storage.append(
          contentsOf: UnsafeRawBufferPointer(start: bytes + sent, count: length - sent))
        offset = 0
        return .blocked
      }
      sent += n
    }
    return .done
  }

  /// One send that does not wait, for replies small enough to fit an empty socket buffer.
  static func sendNow(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes {
      Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) == $0.count
    }
  }
}
