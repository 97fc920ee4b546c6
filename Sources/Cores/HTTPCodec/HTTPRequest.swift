/// An HTTP/1.1 request to encode (client side). The encoder writes Host from `host` and
/// Content-Length from `body`, so those two may not also appear in `headers`.
public struct HTTPRequest: Equatable, Sendable {
  public var method: String
  /// The request target: an origin-form path with query, e.g. "/nostr/relays.csv?x=1".
  public var target: String
  /// The Host header value: the name (and port if not the default) the client asked for.
  public var host: String
  public var headers: HTTPHeaders
  public var body: [UInt8]

  public init(
    method: String = "GET", target: String = "/", host: String, headers: HTTPHeaders = [:],
    body: [UInt8] = []
  ) {
    self.method = method
    self.target = target
    self.host = host
    self.headers = headers
    self.body = body
  }

  /// The bytes on the wire. Throws when a field cannot be sent as is (a header injection).
  public func encoded() throws -> [UInt8] {
    guard HTTPSyntax.isToken(method) else {
      throw HTTPCodecError(.invalidField(name: "method", detail: "\"\(method)\""), offset: nil)
    }
    guard !target.isEmpty, target.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
      throw HTTPCodecError(
        .invalidField(name: "target", detail: "\"\(target)\" has spaces or controls"),
        offset: nil)
    }
    guard !host.isEmpty, host.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
      throw HTTPCodecError(.invalidField(name: "Host", detail: "\"\(host)\""), offset: nil)
    }
    var text = "\(method) \(target) HTTP/1.1\r\nHost: \(host)\r\n"
    for (name, value) in headers {
      let lowered = name.lowercased()
      guard lowered != "host" && lowered != "content-length" && lowered != "transfer-encoding"
      else {
        throw HTTPCodecError(
          .invalidField(name: "header \(name)", detail: "set by the encoder"), offset: nil)
      }
      try HTTPSyntax.validateField(name: name, value: value)
      text += "\(name): \(value)\r\n"
    }
    if !body.isEmpty || ["POST", "PUT", "PATCH"].contains(method) {
      text += "Content-Length: \(body.count)\r\n"
    }
    text += "\r\n"
    return Array(text.utf8) + body
  }
}

/// A parsed request line and header fields (server side).
public struct HTTPRequestHead: Equatable, Sendable {
  public var method: String
  public var target: String
  /// "HTTP/1.1" or "HTTP/1.0".
  public var version: String
  public var headers: HTTPHeaders

  public init(method: String, target: String, version: String, headers: HTTPHeaders) {
    self.method = method
    self.target = target
    self.version = version
    self.headers = headers
  }

  /// Whether the connection stays open after this exchange (HTTP/1.1 default, "close" ends it).
  public var keepAlive: Bool {
    let tokens = headers.tokens(for: "Connection")
    if version == "HTTP/1.0" { return tokens.contains("keep-alive") }
    return !tokens.contains("close")
  }
}
