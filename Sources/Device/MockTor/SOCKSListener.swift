import FailClosedSupport
import Foundation
import SOCKS

/// The mock's SOCKS port: one listening socket served by a few event-loop threads
/// (``SOCKSEventLoop``), each accepting and serving its own connections: one per core, so the
/// port uses every core and each loop finds work waiting rather than sleeping between events
/// (``MockTorConfiguration/socksLoopThreads``).
final class SOCKSListener: @unchecked Sendable {
  typealias RequestHandler = @Sendable (Socket, SOCKSRequest, [UInt8], SocketAddress?) -> Void
  typealias RejectHandler = @Sendable (SOCKSError, SocketAddress?) -> Void
  typealias Router = @Sendable (SOCKSRequest) -> StreamRoute

  /// What the loops' streams need from their mock: its configuration, its log and plan time's
  /// origin on the configured clock.
  struct StreamContext: Sendable {
    let configuration: MockTorConfiguration
    let eventLog: MockTorEventLog
    let origin: Double
    var planTime: Double { configuration.clock.now - origin }
  }

  let socket: Socket
  let address: SocketAddress
  private let loops: [SOCKSEventLoop]
  private let lock = NSLock()
  private var state = State.created

  private enum State { case created, running, stopped }

  init(
    address: SocketAddress, policy: SOCKSServerPolicy, clock: any HarnessClock,
    handshakeTimeout: Double, maxPending: Int, loops count: Int, context: StreamContext,
    route: @escaping Router,
    onRequest: @escaping RequestHandler, onReject: @escaping RejectHandler
  ) throws {
    let socket = try Socket.listen(on: address, backlog: 4096)
    try socket.setNonBlocking(true)
    self.socket = socket
    self.address = socket.localAddress ?? address
    let count = max(1, count)
    let settings = SOCKSEventLoop.Settings(
      policy: policy, clock: clock, handshakeTimeout: handshakeTimeout,
      maxPending: (maxPending + count - 1) / count, context: context, route: route,
      onRequest: onRequest, onReject: onReject)
    let port = self.address.port
    do {
      loops = try (0..<count).map {
        try SOCKSEventLoop(listener: socket, name: "mocktor.socks.\(port).\($0)", settings)
      }
    } catch {
      socket.close()
      throw error
    }
  }

  /// Connections held by the loops: handshaking, and streams relayed on a loop.
  var currentPending: Int { loops.reduce(0) { $0 + $1.currentConnections } }

  func start() {
    let starting = lock.withLock {
      guard state == .created else { return false }
      state = .running
      return true
    }
    if starting { for loop in loops { loop.start() } }
  }

  /// Stops accepting, closes every connection of every loop and waits for the loops to end.
  func stop() {
    let previous = lock.withLock {
      defer { state = .stopped }
      return state
    }
    guard previous != .stopped else { return }
    if previous == .running {
      for loop in loops { loop.requestStop() }
      for loop in loops { loop.waitUntilStopped() }
    }
    socket.close()
  }
}
