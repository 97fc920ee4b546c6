import HTTPCodec
import Testing

@Suite struct WebSocketHandshakeTests {
  @Test func rfc6455ExampleKeyGivesTheExampleAccept() {
    // RFC 6455 section 1.3.
    #expect(
      WebSocketHandshake.acceptValue(forKey: "dGhlIHNhbXBsZSBub25jZQ==")
        == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    #expect(
      WebSocketHandshake.key(nonce: Array("the sample nonce".utf8)) == "dGhlIHNhbXBsZSBub25jZQ==")
  }

  @Test func clientRequestIsAcceptedByTheServerSideAndItsAnswerVerifies() throws {
    let key = "dGhlIHNhbXBsZSBub25jZQ=="
    let request = WebSocketHandshake.clientRequest(
      host: "relay.damus.io", target: "/", key: key, headers: ["Origin": "https://a"])
    var parser = HTTPRequestParser()
    guard case .head(let head) = try parser.parse(try request.encoded()).first else {
      throw ParseFailure()
    }
    #expect(WebSocketHandshake.isUpgradeRequest(head))
    let response = try WebSocketHandshake.serverResponse(for: head)
    #expect(response.status == 101)
    #expect(response.headers["Sec-WebSocket-Accept"] == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    try WebSocketHandshake.verifyServerResponse(response.head, key: key)
  }

  @Test func clientRefusesAWrongOrMissingAccept() {
    let key = "dGhlIHNhbXBsZSBub25jZQ=="
    var head = HTTPResponseHead(
      status: 101, reason: "Switching Protocols",
      headers: ["Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Accept": "x"])
    #expect(throws: WebSocketError.self) {
      try WebSocketHandshake.verifyServerResponse(head, key: key)
    }
    head.headers.remove("Sec-WebSocket-Accept")
    #expect(throws: WebSocketError(.handshake, "Sec-WebSocket-Accept missing")) {
      try WebSocketHandshake.verifyServerResponse(head, key: key)
    }
    let notUpgraded = HTTPResponseHead(status: 200, reason: "OK", headers: [:])
    #expect(throws: WebSocketError(.handshake, "status 200 OK, expected 101")) {
      try WebSocketHandshake.verifyServerResponse(notUpgraded, key: key)
    }
  }

  @Test func serverRefusesABadKeyOrVersion() {
    let good: HTTPHeaders = [
      "Host": "a", "Upgrade": "websocket", "Connection": "keep-alive, Upgrade",
      "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13",
    ]
    var badKey = good
    badKey.set("Sec-WebSocket-Key", "c2hvcnQ=")
    var badVersion = good
    badVersion.set("Sec-WebSocket-Version", "8")
    for headers in [badKey, badVersion] {
      let head = HTTPRequestHead(method: "GET", target: "/", version: "HTTP/1.1", headers: headers)
      #expect(throws: WebSocketError.self) { try WebSocketHandshake.serverResponse(for: head) }
    }
    let ok = HTTPRequestHead(method: "GET", target: "/", version: "HTTP/1.1", headers: good)
    #expect(throws: Never.self) { try WebSocketHandshake.serverResponse(for: ok) }
  }
}
