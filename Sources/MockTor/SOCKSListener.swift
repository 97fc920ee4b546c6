import FailClosedSupport
import Foundation
import SOCKS

/// Accepts SOCKS connections and runs every handshake on one poll(2) thread, so thousands
/// of stalled or malformed clients cost a descriptor each and no thread. A finished request
/// is handed to `onRequest` (which starts the stream on its own thread); a failed handshake
/// gets its reply (tor's bytes) and is closed; a silent one is closed after the timeout.
final class SOCKSListener: @unchecked Sendable {
  struct Pending {
    let socket: Socket
    let peer: SocketAddress?
    var handshake: SOCKSServerHandshake
    var buffer: [UInt8] = []
    let since: Double
  }

  typealias RequestHandler = @Sendable (Socket, SOCKSRequest, [UInt8], SocketAddress?) -> Void
  typealias RejectHandler = @Sendable (SOCKSError, SocketAddress?) -> Void

  let socket: Socket
  let address: SocketAddress
  private let policy: SOCKSServerPolicy
  private let clock: any HarnessClock
  private let handshakeTimeout: Double
  private let maxPending: Int
  private let onRequest: RequestHandler
  private let onReject: RejectHandler
  private let lock = NSLock()
  private var stopping = false
  private var stopped = false
  private let finished = DispatchSemaphore(value: 0)
  private(set) var pendingCount = 0

  init(
    address: SocketAddress, policy: SOCKSServerPolicy, clock: any HarnessClock,
    handshakeTimeout: Double, maxPending: Int, onRequest: @escaping RequestHandler,
    onReject: @escaping RejectHandler
  ) throws {
    socket = try Socket.listen(on: address, backlog: 4096)
    try socket.setNonBlocking(true)
    self.address = socket.localAddress ?? address
    self.policy = policy
    self.clock = clock
    self.handshakeTimeout = handshakeTimeout
    self.maxPending = maxPending
    self.onRequest = onRequest
    self.onReject = onReject
  }

  var currentPending: Int { lock.withLock { pendingCount } }

  func start() {
    BlockingIO.detach("mocktor.socks.\(address.port)") { [self] in
      loop()
      finished.signal()
    }
  }

  /// Stops accepting, closes every handshaking connection and waits for the loop to end.
  func stop() {
    let wasRunning = lock.withLock {
      let running = !stopping
      stopping = true
      return running
    }
    if wasRunning { finished.wait() }
  }

  private var isStopping: Bool { lock.withLock { stopping } }

  private func loop() {
    var pending: [Pending] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    defer {
      for connection in pending { connection.socket.close() }
      socket.close()
    }
    while !isStopping {
      var fds = [pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)]
      fds += pending.map { pollfd(fd: $0.socket.fd, events: Int16(POLLIN), revents: 0) }
      let ready = poll(&fds, nfds_t(fds.count), 100)
      if ready < 0 && errno != EINTR { MockTor.pollInterval.sleepBlocking(seconds: 0.01) }
      let now = clock.now
      var keep = [Bool](repeating: true, count: pending.count)
      for index in pending.indices {
        let revents = Int32(fds[index + 1].revents)
        if revents & (Int32(POLLIN) | Int32(POLLHUP) | Int32(POLLERR)) != 0 {
          keep[index] = service(&pending[index], scratch: &buffer)
        } else if now - pending[index].since > handshakeTimeout {
          pending[index].socket.close()
          keep[index] = false
        }
      }
      pending = zip(pending, keep).compactMap { $1 ? $0 : nil }
      if fds[0].revents & Int16(POLLIN) != 0 {
        acceptAll(into: &pending, now: now)
      }
      lock.withLock { pendingCount = pending.count }
    }
  }

  private func acceptAll(into pending: inout [Pending], now: Double) {
    for _ in 0..<256 {
      do {
        let (client, peer) = try socket.accept()
        try? client.setNonBlocking(true)
        if pending.count >= maxPending {
          pending.removeFirst().socket.close()
        }
        pending.append(
          Pending(
            socket: client, peer: peer, handshake: SOCKSServerHandshake(policy: policy), since: now)
        )
      } catch let error as SystemError {
        if error.code == EMFILE || error.code == ENFILE, !pending.isEmpty {
          // Out of descriptors: shed the oldest handshake rather than spin on accept.
          pending.removeFirst().socket.close()
          continue
        }
        return
      } catch {
        return
      }
    }
  }

  /// Reads what is available and advances the handshake; false when the connection left
  /// the loop (closed, or handed to a stream).
  private func service(_ connection: inout Pending, scratch: inout [UInt8]) -> Bool {
    let count = scratch.withUnsafeMutableBytes {
      Glibc.read(connection.socket.fd, $0.baseAddress, $0.count)
    }
    if count < 0 && (errno == EAGAIN || errno == EINTR) { return true }
    if count <= 0 {
      connection.socket.close()
      return false
    }
    connection.buffer += scratch.prefix(count)
    for _ in 0..<8 {
      let action = connection.handshake.handle(connection.buffer)
      connection.buffer.removeFirst(action.consumed)
      if !action.reply.isEmpty { sendReply(action.reply, on: connection.socket) }
      switch action.outcome {
      case .continueHandshake: continue
      case .needMoreInput:
        // Every SOCKS message is bounded; more than this without a decision is garbage.
        if connection.buffer.count > 4096 {
          connection.socket.close()
          return false
        }
        return true
      case .finished(let request):
        try? connection.socket.setNonBlocking(false)
        onRequest(connection.socket, request, connection.buffer, connection.peer)
        return false
      case .failed(let error):
        onReject(error, connection.peer)
        connection.socket.shutdownWrite()
        connection.socket.close()
        return false
      }
    }
    connection.socket.close()
    return false
  }

  /// Handshake replies are small (the largest is tor's 730-byte HTTP page) and fit in an
  /// empty socket buffer; a client that does not read them loses them.
  private func sendReply(_ bytes: [UInt8], on socket: Socket) {
    _ = bytes.withUnsafeBytes {
      Glibc.send(socket.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
    }
  }
}
