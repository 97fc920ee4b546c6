/// A parsed status line and header fields (client side).
public struct HTTPResponseHead: Equatable, Sendable {
  public var version: String
  public var status: Int
  public var reason: String
  public var headers: HTTPHeaders

  public init(version: String = "HTTP/1.1", status: Int, reason: String, headers: HTTPHeaders) {
    self.version = version
    self.status = status
    self.reason = reason
    self.headers = headers
  }

  /// Whether the server keeps the connection open after this response.
  public var keepAlive: Bool {
    let tokens = headers.tokens(for: "Connection")
    if version == "HTTP/1.0" { return tokens.contains("keep-alive") }
    return !tokens.contains("close")
  }
}

/// A complete response: what the blocking client returns and what the server helper encodes.
public struct HTTPResponse: Equatable, Sendable {
  public var status: Int
  public var reason: String
  public var headers: HTTPHeaders
  public var body: [UInt8]

  public init(
    status: Int = 200, reason: String? = nil, headers: HTTPHeaders = [:], body: [UInt8] = []
  ) {
    self.status = status
    self.reason = reason ?? HTTPResponse.standardReason(status)
    self.headers = headers
    self.body = body
  }

  public var head: HTTPResponseHead {
    HTTPResponseHead(status: status, reason: reason, headers: headers)
  }

  public var bodyText: String { String(decoding: body, as: UTF8.self) }

  /// The bytes on the wire, HTTP/1.1, with Content-Length (none for 1xx, 204 and 304).
  public func encoded() throws -> [UInt8] {
    guard (100...999).contains(status) else {
      throw HTTPCodecError(.invalidField(name: "status", detail: "\(status)"), offset: nil)
    }
    guard reason.utf8.allSatisfy(HTTPSyntax.isFieldValueByte) else {
      throw HTTPCodecError(.invalidField(name: "reason", detail: "control character"), offset: nil)
    }
    var text = "HTTP/1.1 \(status) \(reason)\r\n"
    for (name, value) in headers {
      let lowered = name.lowercased()
      guard lowered != "content-length" && lowered != "transfer-encoding" else {
        throw HTTPCodecError(
          .invalidField(name: "header \(name)", detail: "set by the encoder"), offset: nil)
      }
      try HTTPSyntax.validateField(name: name, value: value)
      text += "\(name): \(value)\r\n"
    }
    let bodyless = status < 200 || status == 204 || status == 304
    if !bodyless { text += "Content-Length: \(body.count)\r\n" }
    text += "\r\n"
    return Array(text.utf8) + (bodyless ? [] : body)
  }

  static func standardReason(_ status: Int) -> String {
    switch status {
    case 101: return "Switching Protocols"
    case 200: return "OK"
    case 204: return "No Content"
    case 301: return "Moved Permanently"
    case 304: return "Not Modified"
    case 400: return "Bad Request"
    case 403: return "Forbidden"
    case 404: return "Not Found"
    case 426: return "Upgrade Required"
    case 429: return "Too Many Requests"
    case 500: return "Internal Server Error"
    case 502: return "Bad Gateway"
    case 503: return "Service Unavailable"
    default: return "Status \(status)"
    }
  }
}
