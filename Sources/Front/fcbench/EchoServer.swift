import FailClosedSupport
import Foundation

/// The targets every proxy under load connects to, on loopback: an echo port, and a sink port
/// that reads a length-prefixed payload and answers one byte when all of it arrived (one-way
/// bulk, needing no half-close, which a proxy whose copy loop blocks in one direction,
/// microsocks, survives, where a full-duplex echo would deadlock it). Served by a few epoll
/// loop threads, each with an echo socket of its own on the port (SO_REUSEPORT), the first also
/// serving the sink. Loops rather than a thread per connection: at thousands of connections a
/// second, creating a thread for each took a share of the two cores the proxy under test runs
/// on as large as the proxy's own (docs/performance.md), and that share measured the generator.
final class EchoServer: @unchecked Sendable {
  let address: SocketAddress
  let sinkAddress: SocketAddress
  private let loops: [Loop]
  private let sockets: [Socket]

  static let loopCount = 4

  init() throws {
    var sockets = [try Socket.listen(on: SocketAddress("127.0.0.1:0")!, reusePort: true)]
    let address = sockets[0].localAddress!
    while sockets.count < Self.loopCount {
      sockets.append(try Socket.listen(on: address, reusePort: true))
    }
    let sink = try Socket.listen(on: SocketAddress("127.0.0.1:0")!)
    sockets.append(sink)
    for socket in sockets { try socket.setNonBlocking(true) }
    self.sockets = sockets
    self.address = address
    sinkAddress = sink.localAddress!
    loops = try (0..<Self.loopCount).map {
      try Loop(echo: sockets[$0], sink: $0 == 0 ? sink : nil)
    }
    for (index, loop) in loops.enumerated() {
      BlockingIO.detach("echo.loop.\(index)") { loop.run() }
    }
  }

  /// Ends the loops, closing every connection they hold, and the listening sockets.
  func stop() {
    for loop in loops { loop.requestStop() }
    for loop in loops { loop.waitUntilStopped() }
    for socket in sockets { socket.close() }
  }

  /// One loop thread: its listening sockets and the connections it accepted from them.
  private final class Loop: @unchecked Sendable {
    private let echo: Socket
    private let sink: Socket?
    private let poll: EventPoll
    private let stop: EventLoopStop
    // The loop thread's own.
    private var connections: [UInt64: Connection] = [:]
    private var nextToken: UInt64 = 2

    private static let echoToken: UInt64 = 0
    private static let sinkToken: UInt64 = 1
    private static let readSize = 262_144

    /// An accepted connection.
    private final class Connection {
      let socket: Socket
      let isSink: Bool
      /// Echo bytes the client's socket has not taken yet (reading waits until it has).
      var pending: [UInt8] = []
      /// The sink's length prefix as far as it came, the length, and the bytes counted.
      var header: [UInt8] = []
      var expected = -1
      var count = 0

      init(socket: Socket, isSink: Bool) {
        self.socket = socket
        self.isSink = isSink
      }
    }

    init(echo: Socket, sink: Socket?) throws {
      self.echo = echo
      self.sink = sink
      poll = try EventPoll(capacity: 256)
      stop = EventLoopStop(poll)
      try poll.add(echo.fd, .readable, token: Self.echoToken)
      if let sink { try poll.add(sink.fd, .readable, token: Self.sinkToken) }
    }

    func requestStop() { stop.request() }

    func waitUntilStopped() { stop.waitForEnd() }

    func run() {
      let buffer = UnsafeMutableRawBufferPointer.allocate(
        byteCount: Self.readSize, alignment: 16)
      defer {
        for connection in connections.values { connection.socket.close() }
        connections = [:]
        buffer.deallocate()
        stop.loopEnded()
      }
      while !stop.isRequested {
        _ = try? poll.wait(timeout: 0.5) { token, _ in
          if token == Self.echoToken || token == Self.sinkToken {
            accept(token == Self.sinkToken)
          } else if let connection = connections[token] {
            serve(token, connection, buffer)
          }
        }
      }
    }

    private func accept(_ isSink: Bool) {
      let listener = isSink ? sink! : echo
      while let (client, _) = (try? listener.acceptNonBlocking()) ?? nil {
        guard (try? poll.add(client.fd, .readable, token: nextToken)) != nil else {
          client.close()
          continue
        }
        connections[nextToken] = Connection(socket: client, isSink: isSink)
        nextToken += 1
      }
    }

    private func close(_ token: UInt64, _ connection: Connection) {
      connections[token] = nil
      connection.socket.close()
    }

    /// Level-triggered: one read per readiness report, or one send of what an echo left.
    private func serve(
      _ token: UInt64, _ connection: Connection, _ buffer: UnsafeMutableRawBufferPointer
    ) {
      let fd = connection.socket.fd
      if !connection.pending.isEmpty {
        let sent = connection.pending.withUnsafeBytes {
          Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
        }
        if sent < 0 {
          if errno != EAGAIN && errno != EINTR { close(token, connection) }
          return
        }
        connection.pending.removeFirst(sent)
        if connection.pending.isEmpty { try? poll.modify(fd, .readable, token: token) }
        return
      }
      let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
      if n < 0 && (errno == EAGAIN || errno == EINTR) { return }
      guard n > 0 else {
        close(token, connection)
        return
      }
      if connection.isSink {
        if Self.sink(connection, buffer.baseAddress!, n) { close(token, connection) }
        return
      }
      var sent = 0
      while sent < n {
        let result = Glibc.send(fd, buffer.baseAddress! + sent, n - sent, Int32(MSG_NOSIGNAL))
        if result < 0 {
          if errno == EINTR { continue }
          if errno != EAGAIN {
            close(token, connection)
            return
          }
          connection.pending = Array(
            UnsafeRawBufferPointer(start: buffer.baseAddress! + sent, count: n - sent))
          try? poll.modify(fd, .writable, token: token)
          return
        }
        sent += result
      }
    }

    /// Counts `n` bytes of a sink's payload (after its 8-byte big-endian length); once all of it
    /// arrived, answers one byte and says the connection is done.
    private static func sink(_ connection: Connection, _ bytes: UnsafeMutableRawPointer, _ n: Int)
      -> Bool
    {
      var offset = 0
      if connection.expected < 0 {
        let take = min(8 - connection.header.count, n)
        connection.header += UnsafeRawBufferPointer(start: bytes, count: take)
        offset = take
        if connection.header.count == 8 {
          connection.expected = connection.header.reduce(0) { $0 << 8 | Int($1) }
        }
      }
      connection.count += n - offset
      guard connection.expected >= 0, connection.count >= connection.expected else {
        return false
      }
      var answer: UInt8 = connection.count == connection.expected ? 0x01 : 0x00
      _ = Glibc.send(connection.socket.fd, &answer, 1, Int32(MSG_NOSIGNAL))
      return true
    }
  }
}
