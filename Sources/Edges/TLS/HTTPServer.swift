import FailClosedSupport
import Foundation
import HTTPCodec

/// One request as the server saw it: which name the client asked for in SNI (TLS only) and in
/// Host, which matters to the audit (names in the clear are evidence).
public struct HTTPServerRequest: Sendable {
  public let head: HTTPRequestHead
  public let body: [UInt8]
  /// The SNI name of the TLS connection, nil for plain HTTP or a client that sent none.
  public let serverName: String?
  public let peer: SocketAddress?

  public var host: String? { head.headers["Host"] }
  public var isWebSocket: Bool { WebSocketHandshake.isUpgradeRequest(head) }
}

/// A small threaded HTTP/1.1 server for tests and for the sandbox's world: it answers any
/// request (by default 200 with a fixed body), over TLS when given a ``TLSServer`` (then any
/// SNI name gets a matching certificate), keeps connections alive, and upgrades WebSocket
/// requests to an echo (or to a handler). Every request is recorded.
public final class HTTPServer: @unchecked Sendable {
  public typealias Handler = @Sendable (HTTPServerRequest) -> HTTPResponse
  public typealias WebSocketHandler = @Sendable (WebSocketConnection, HTTPServerRequest) -> Void

  /// The bound address (port 0 resolved to the real port).
  public let address: SocketAddress
  public let tls: TLSServer?

  private let listener: Socket
  private let handler: Handler
  private let webSocketHandler: WebSocketHandler?
  private let idleTimeout: Double
  private let limits: HTTPLimits
  private let lock = NSLock()
  private var stopped = false
  private var started = false
  private var active: [ObjectIdentifier: Socket] = [:]
  private var log: [HTTPServerRequest] = []
  private var errors: [String] = []
  private static let logLimit = 10000

  /// Binds and listens at once (so the port is known); ``start()`` begins accepting.
  /// - Parameters:
  ///   - handler: the answer to a plain request; default 200 "ok".
  ///   - webSocket: runs an upgraded connection; default echoes text and binary messages.
  ///     Pass `acceptsWebSocket: false` to answer upgrade requests with the handler instead.
  public convenience init(
    address: SocketAddress = SocketAddress("127.0.0.1:0")!, tls: TLSServer? = nil,
    idleTimeout: Double = 30, limits: HTTPLimits = HTTPLimits(), acceptsWebSocket: Bool = true,
    webSocket: WebSocketHandler? = nil, handler: Handler? = nil
  ) throws {
    try self.init(
      listener: try Socket.listen(on: address), tls: tls, idleTimeout: idleTimeout,
      limits: limits, acceptsWebSocket: acceptsWebSocket, webSocket: webSocket, handler: handler)
  }

  /// Serves on a socket that is already listening, e.g. one created inside a network namespace
  /// (the sandbox's world). Either call ``start()`` for the built-in accept loop, or hand
  /// accepted connections to ``serve(_:)`` from your own loop.
  public init(
    listener: Socket, tls: TLSServer? = nil, idleTimeout: Double = 30,
    limits: HTTPLimits = HTTPLimits(), acceptsWebSocket: Bool = true,
    webSocket: WebSocketHandler? = nil, handler: Handler? = nil
  ) throws {
    BlockingIO.ignoreSIGPIPE()
    self.listener = listener
    guard let bound = listener.localAddress else { throw SystemError("getsockname") }
    self.address = bound
    self.tls = tls
    self.idleTimeout = idleTimeout
    self.limits = limits
    self.handler = handler ?? { _ in HTTPResponse(body: Array("ok".utf8)) }
    webSocketHandler = acceptsWebSocket ? (webSocket ?? HTTPServer.echo) : nil
  }

  deinit { stop() }

  /// A server answering every plain request with `status` and `body`.
  public convenience init(
    address: SocketAddress = SocketAddress("127.0.0.1:0")!, tls: TLSServer? = nil,
    status: Int = 200, body: [UInt8], contentType: String = "text/plain"
  ) throws {
    try self.init(
      address: address, tls: tls,
      handler: { _ in
        HTTPResponse(status: status, headers: ["Content-Type": contentType], body: body)
      })
  }

  /// Starts the accept loop on its own thread; idempotent.
  public func start() {
    let first: Bool = lock.withLock {
      defer { started = true }
      return !started && !stopped
    }
    guard first else { return }
    BlockingIO.detach("failclosed.http-server.accept") { [self] in acceptLoop() }
  }

  /// Stops accepting, closes every open connection; idempotent.
  public func stop() {
    let sockets: [Socket] = lock.withLock {
      guard !stopped else { return [] }
      stopped = true
      return Array(active.values)
    }
    listener.shutdown()  // wakes the thread in accept()
    listener.close()
    for socket in sockets {
      socket.shutdown()
    }
  }

  /// Every request received so far (the last 10,000), in order.
  public var requests: [HTTPServerRequest] { lock.withLock { log } }

  /// Connection-level failures (TLS handshakes refused, malformed requests), for diagnosis.
  public var connectionErrors: [String] { lock.withLock { errors } }

  /// Echoes text and binary messages until the peer closes.
  public static let echo: WebSocketHandler = { connection, _ in
    while let message = try? connection.receive() {
      switch message {
      case .text(let text): try? connection.send(text: text)
      case .binary(let bytes): try? connection.send(binary: bytes)
      case .close: return
      case .ping, .pong: continue
      }
    }
  }

  private func acceptLoop() {
    while true {
      let accepted: Socket
      do {
        (accepted, _) = try listener.accept()
      } catch {
        if lock.withLock({ stopped }) { return }
        if let error = error as? SystemError, error.code == EMFILE || error.code == ENFILE {
          record(error: "\(error)")
          usleep(10_000)  // out of descriptors: back off instead of spinning
        }
        continue
      }
      if lock.withLock({ stopped }) {
        accepted.close()
        return
      }
      BlockingIO.detach("failclosed.http-server.connection") { [self] in serve(accepted) }
    }
  }

  /// Serves one accepted connection until it closes (TLS handshake first when configured),
  /// then closes it. Blocks: call on a dedicated thread, one per connection.
  public func serve(_ socket: Socket) {
    let admitted: Bool = lock.withLock {
      guard !stopped else { return false }
      active[ObjectIdentifier(socket)] = socket
      return true
    }
    defer {
      lock.withLock { _ = active.removeValue(forKey: ObjectIdentifier(socket)) }
      socket.close()
    }
    guard admitted else { return }
    serveAdmitted(socket)
  }

  private func serveAdmitted(_ socket: Socket) {
    let peer = socket.remoteAddress
    let stream: any ByteStream
    var serverName: String?
    do {
      if let tls {
        let connection = try tls.accept(socket, timeout: idleTimeout)
        connection.setTimeout(idleTimeout)
        serverName = connection.serverName
        stream = connection
      } else {
        socket.setTimeouts(seconds: idleTimeout)
        stream = socket
      }
    } catch {
      record(error: "handshake with \(peer.map(\.description) ?? "peer"): \(error)")
      return
    }
    defer { stream.close() }
    var parser = HTTPRequestParser(limits: limits)
    var head: HTTPRequestHead?
    var body: [UInt8] = []
    var input: [UInt8] = []
    do {
      while true {
        for event in try parser.parse(input) {
          switch event {
          case .head(let received):
            head = received
            body = []
          case .body(let piece):
            body += piece
          case .end:
            guard let head else { continue }
            let request = HTTPServerRequest(
              head: head, body: body, serverName: serverName, peer: peer)
            record(request)
            if request.isWebSocket, let webSocketHandler {
              upgrade(
                request, stream: stream, leftover: parser.takeBufferedBytes(),
                handler: webSocketHandler)
              return
            }
            try stream.write(handler(request).encoded())
            if !head.keepAlive { return }
          }
        }
        input = try stream.read(max: 65536)
        if input.isEmpty {
          try parser.finish()
          return
        }
      }
    } catch let error as HTTPCodecError {
      record(error: "request from \(peer.map(\.description) ?? "peer"): \(error)")
      let refusal = HTTPResponse(
        status: 400, headers: ["Connection": "close"], body: Array("\(error)\n".utf8))
      try? stream.write(refusal.encoded())
    } catch {
      record(error: "connection from \(peer.map(\.description) ?? "peer"): \(error)")
    }
  }

  private func upgrade(
    _ request: HTTPServerRequest, stream: any ByteStream, leftover: [UInt8],
    handler: WebSocketHandler
  ) {
    do {
      try stream.write(WebSocketHandshake.serverResponse(for: request.head).encoded())
    } catch {
      record(error: "WebSocket upgrade: \(error)")
      var headers: HTTPHeaders = ["Connection": "close"]
      let status = request.head.headers["Sec-WebSocket-Version"] == "13" ? 400 : 426
      if status == 426 { headers.add("Sec-WebSocket-Version", "13") }
      let refusal = HTTPResponse(status: status, headers: headers, body: Array("\(error)\n".utf8))
      try? stream.write(refusal.encoded())
      return
    }
    let connection = WebSocketConnection(stream: stream, role: .server, leftover: leftover)
    handler(connection, request)
    connection.close()
  }

  private func record(_ request: HTTPServerRequest) {
    lock.withLock {
      log.append(request)
      if log.count > Self.logLimit { log.removeFirst(log.count - Self.logLimit) }
    }
  }

  private func record(error: String) {
    lock.withLock {
      errors.append(error)
      if errors.count > 1000 { errors.removeFirst() }
    }
  }
}
