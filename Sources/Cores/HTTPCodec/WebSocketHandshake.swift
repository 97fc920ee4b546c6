import Digest
import Foundation

/// The opening handshake of RFC 6455 section 4, both sides, as pure functions over the HTTP
/// types. Randomness (the 16-byte nonce) comes from the caller.
public enum WebSocketHandshake {
  public static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

  /// The Sec-WebSocket-Key for a 16-byte random nonce.
  public static func key(nonce: [UInt8]) -> String {
    precondition(nonce.count == 16, "a WebSocket nonce is 16 bytes")
    return Data(nonce).base64EncodedString()
  }

  /// base64(SHA-1(key + GUID)): the value the server must echo in Sec-WebSocket-Accept.
  public static func acceptValue(forKey key: String) -> String {
    Data(SHA1.digest(Array((key + guid).utf8))).base64EncodedString()
  }

  /// The client's upgrade request. `host` is the Host header ("relay.example" or with a port).
  public static func clientRequest(
    host: String, target: String = "/", key: String, headers: HTTPHeaders = [:]
  ) -> HTTPRequest {
    var all: HTTPHeaders = [
      "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Key": key,
      "Sec-WebSocket-Version": "13",
    ]
    for field in headers { all.add(field.name, field.value) }
    return HTTPRequest(method: "GET", target: target, host: host, headers: all)
  }

  /// Checks the server's answer as RFC 6455 section 4.1 requires of a client.
  public static func verifyServerResponse(_ head: HTTPResponseHead, key: String) throws {
    guard head.status == 101 else {
      throw WebSocketError(.handshake, "status \(head.status) \(head.reason), expected 101")
    }
    guard head.headers["Upgrade"]?.lowercased() == "websocket" else {
      throw WebSocketError(
        .handshake, "Upgrade header is \(head.headers["Upgrade"] ?? "missing"), not websocket")
    }
    guard head.headers.tokens(for: "Connection").contains("upgrade") else {
      throw WebSocketError(.handshake, "Connection header does not contain Upgrade")
    }
    let expected = acceptValue(forKey: key)
    guard let accept = head.headers["Sec-WebSocket-Accept"] else {
      throw WebSocketError(.handshake, "Sec-WebSocket-Accept missing")
    }
    guard accept == expected else {
      throw WebSocketError(
        .handshake, "Sec-WebSocket-Accept is \(accept), expected \(expected)")
    }
    if let extensions = head.headers["Sec-WebSocket-Extensions"] {
      throw WebSocketError(.handshake, "server chose extensions we did not offer: \(extensions)")
    }
  }

  /// The server's 101 answer to a valid upgrade request, or an error naming what is wrong
  /// (the server edge answers 400, or 426 for a wrong version).
  public static func serverResponse(for request: HTTPRequestHead) throws -> HTTPResponse {
    guard request.method == "GET", request.version == "HTTP/1.1" else {
      throw WebSocketError(
        .handshake, "\(request.method) \(request.version), expected GET HTTP/1.1")
    }
    guard request.headers["Upgrade"]?.lowercased() == "websocket" else {
      throw WebSocketError(.handshake, "Upgrade header is not websocket")
    }
    guard request.headers.tokens(for: "Connection").contains("upgrade") else {
      throw WebSocketError(.handshake, "Connection header does not contain Upgrade")
    }
    guard request.headers["Sec-WebSocket-Version"] == "13" else {
      throw WebSocketError(
        .handshake,
        "Sec-WebSocket-Version is \(request.headers["Sec-WebSocket-Version"] ?? "missing"), expected 13"
      )
    }
    guard let key = request.headers["Sec-WebSocket-Key"],
      let nonce = Data(base64Encoded: key), nonce.count == 16
    else {
      throw WebSocketError(.handshake, "Sec-WebSocket-Key is missing or not 16 bytes in base64")
    }
    return HTTPResponse(
      status: 101,
      headers: [
        "Upgrade": "websocket", "Connection": "Upgrade",
        "Sec-WebSocket-Accept": acceptValue(forKey: key),
      ])
  }

  /// True when a request asks to upgrade to WebSocket (the server routes it to the handshake).
  public static func isUpgradeRequest(_ request: HTTPRequestHead) -> Bool {
    request.headers["Upgrade"]?.lowercased() == "websocket"
  }
}
