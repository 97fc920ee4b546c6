import FailClosedSupport
import Foundation
import HTTPCodec
import TLS
import Testing

/// The blocking HTTP, HTTPS and WebSocket edges against the server helper on 127.0.0.1.
@Suite struct HTTPEdgeTests {
  static func tlsWorld() throws -> (TestCertificateAuthority, TLSServer, TLSClient) {
    let authority = try TestCertificateAuthority()
    return (
      authority, try TLSServer(authority: authority),
      try TLSClient(trust: .pem(authority.rootCertificatePEM))
    )
  }

  @Test func httpsClientGetsTheServersAnswerAndTheServerRecordsTheNames() async throws {
    let (_, tlsServer, tlsClient) = try Self.tlsWorld()
    let server = try HTTPServer(
      tls: tlsServer,
      handler: { request in
        HTTPResponse(body: Array("relays for \(request.host ?? "?") \(request.head.target)".utf8))
      })
    server.start()
    defer { server.stop() }
    let address = server.address
    let response = try await BlockingIO.run {
      let socket = try Socket.connect(to: address, timeout: 2)
      return try HTTPSClient(tls: tlsClient).send(
        HTTPRequest(target: "/nostr/relays.csv", host: "dir.example"), over: socket, timeout: 5)
    }
    #expect(response.status == 200)
    #expect(response.bodyText == "relays for dir.example /nostr/relays.csv")
    let recorded = try #require(server.requests.first)
    #expect(recorded.serverName == "dir.example")
    #expect(recorded.host == "dir.example")
    #expect(recorded.peer?.isLoopback == true)
  }

  @Test func httpsClientRefusesAServerPresentingAnotherName() async throws {
    let (authority, _, tlsClient) = try Self.tlsWorld()
    let server = try HTTPServer(
      tls: try TLSServer(authority: authority, presenting: ["evil.example"]), body: [])
    server.start()
    defer { server.stop() }
    let address = server.address
    await #expect {
      try await BlockingIO.run {
        let socket = try Socket.connect(to: address, timeout: 2)
        return try HTTPSClient(tls: tlsClient).send(
          HTTPRequest(host: "dir.example"), over: socket, timeout: 5)
      }
    } throws: { error in
      guard case .verificationFailed(_, _, let reason) = error as? TLSError else { return false }
      return reason == "hostname mismatch"
    }
    #expect(server.requests.isEmpty)
  }

  @Test func plainHTTPKeepsTheConnectionAliveAcrossRequests() async throws {
    let server = try HTTPServer(handler: { request in HTTPResponse(body: request.body.reversed()) })
    server.start()
    defer { server.stop() }
    let address = server.address
    let bodies = try await BlockingIO.run {
      let socket = try Socket.connect(to: address, timeout: 2)
      socket.setTimeouts(seconds: 5)
      defer { socket.close() }
      return try ["abc", "hello"].map { text in
        try HTTPClient.send(
          HTTPRequest(method: "POST", target: "/echo", host: "a.example", body: Array(text.utf8)),
          over: socket
        ).bodyText
      }
    }
    #expect(bodies == ["cba", "olleh"])
    #expect(server.requests.count == 2)
    #expect(server.requests.allSatisfy { $0.serverName == nil })
  }

  @Test func malformedRequestGets400NamingTheByte() async throws {
    let server = try HTTPServer(body: [])
    server.start()
    defer { server.stop() }
    let address = server.address
    let answer = try await BlockingIO.run {
      let socket = try Socket.connect(to: address, timeout: 2)
      socket.setTimeouts(seconds: 5)
      defer { socket.close() }
      try socket.write(Array("GET / HTTP/1.1\r\nBad Header\r\n\r\n".utf8))
      var bytes: [UInt8] = []
      while bytes.count < 65536 {
        let chunk = try socket.read()
        if chunk.isEmpty { break }
        bytes += chunk
      }
      return String(decoding: bytes, as: UTF8.self)
    }
    #expect(answer.hasPrefix("HTTP/1.1 400 Bad Request"))
    #expect(answer.contains("HTTP at byte 16: malformed header field"))
    #expect(server.connectionErrors.count == 1)
  }

  @Test func webSocketEchoOverTLS() async throws {
    let (_, tlsServer, tlsClient) = try Self.tlsWorld()
    let server = try HTTPServer(tls: tlsServer, body: [])
    server.start()
    defer { server.stop() }
    let address = server.address
    let big = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
    let messages = try await BlockingIO.run {
      let socket = try Socket.connect(to: address, timeout: 2)
      let tls = try tlsClient.connect(socket, serverName: "relay.example", timeout: 5)
      tls.setTimeout(5)
      let ws = try WebSocketClient.connect(over: tls, host: "relay.example", target: "/")
      var received: [WebSocketMessage] = []
      try ws.send(text: "[\"REQ\",\"sub\",{}]")
      received.append(try ws.receive())
      try ws.send(binary: big)
      received.append(try ws.receive())
      try ws.ping([1, 2])
      received.append(try ws.receive())
      try ws.send(.close(code: 1000, reason: "bye"))
      received.append(try ws.receive())
      return received
    }
    #expect(
      messages == [
        .text("[\"REQ\",\"sub\",{}]"), .binary(big), .pong([1, 2]), .close(code: 1000, reason: ""),
      ])
    #expect(server.requests.first?.isWebSocket == true)
    #expect(server.requests.first?.serverName == "relay.example")
  }

  @Test func webSocketHandlerCanSpeakFirstAndClientAnswersPings() async throws {
    let server = try HTTPServer(
      webSocket: { connection, request in
        try? connection.send(text: "hello \(request.head.target)")
        try? connection.ping([7])
        if case .pong(let payload)? = try? connection.receive() {
          try? connection.send(binary: payload)
        }
        connection.close(code: 4000, reason: "done")
      }, handler: nil)
    server.start()
    defer { server.stop() }
    let address = server.address
    let messages = try await BlockingIO.run {
      let socket = try Socket.connect(to: address, timeout: 2)
      socket.setTimeouts(seconds: 5)
      let ws = try WebSocketClient.connect(over: socket, host: "a.example", target: "/chat")
      var received: [WebSocketMessage] = []
      for _ in 0..<4 { received.append(try ws.receive()) }
      return received
    }
    #expect(
      messages == [
        .text("hello /chat"), .ping([7]), .binary([7]), .close(code: 4000, reason: "done"),
      ])
  }

  @Test func stopClosesIdleKeepAliveConnections() async throws {
    let server = try HTTPServer(body: Array("x".utf8))
    server.start()
    let address = server.address
    let socket = try await BlockingIO.run {
      let socket = try Socket.connect(to: address, timeout: 2)
      socket.setTimeouts(seconds: 5)
      _ = try HTTPClient.send(HTTPRequest(host: "a"), over: socket)
      return socket
    }
    defer { socket.close() }
    server.stop()
    #expect(try await BlockingIO.run { try socket.read() }.isEmpty)
    await #expect(throws: SystemError.self) {
      try await BlockingIO.run { try Socket.connect(to: address, timeout: 1) }
    }
  }

  @Test func serverOnAGivenListenerServesConnectionsFromTheCallersLoop() async throws {
    let listener = try Socket.listen(on: SocketAddress("127.0.0.1:0")!)
    let server = try HTTPServer(listener: listener, handler: { _ in HTTPResponse(body: [42]) })
    defer { server.stop() }
    let address = server.address
    async let served: Void = BlockingIO.run {
      let (connection, _) = try listener.accept()
      server.serve(connection)
    }
    let response = try await BlockingIO.run {
      let socket = try Socket.connect(to: address, timeout: 2)
      socket.setTimeouts(seconds: 5)
      defer { socket.close() }
      return try HTTPClient.send(
        HTTPRequest(host: "a.example", headers: ["Connection": "close"]), over: socket)
    }
    try await served
    #expect(response.body == [42])
    #expect(server.requests.count == 1)
  }
}
