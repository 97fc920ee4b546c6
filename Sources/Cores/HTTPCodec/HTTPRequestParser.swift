/// Incremental HTTP/1.1 request parser (server side): feed bytes, get each request's head, body
/// pieces and end. Requests without Content-Length or chunked coding have no body; a request
/// with both is refused (request smuggling).
public struct HTTPRequestParser: Sendable {
  public enum Event: Equatable, Sendable {
    case head(HTTPRequestHead)
    case body([UInt8])
    case end
  }

  private var engine: HTTPMessageEngine

  public init(limits: HTTPLimits = HTTPLimits()) {
    engine = HTTPMessageEngine(limits: limits)
  }

  /// Bytes received but not parsed: after a WebSocket upgrade, the first frames.
  public mutating func takeBufferedBytes() -> [UInt8] { engine.buffer.takeAll() }

  public mutating func parse(_ bytes: [UInt8]) throws -> [Event] {
    engine.buffer.append(bytes)
    var events: [Event] = []
    while true {
      switch try engine.next() {
      case .needMore:
        return events
      case .head(let lines, let offset):
        let head = try Self.head(lines, offset: offset, limits: engine.limits)
        events.append(.head(head))
        let framing = try HTTPMessageEngine.declaredFraming(
          head.headers, offset: offset, isRequest: true)
        try engine.beginBody(framing ?? .none)
      case .body(let bytes):
        events.append(.body(bytes))
      case .end:
        events.append(.end)
        // An upgrade request hands the connection over: stop before the next protocol's bytes.
        return events
      }
    }
  }

  public mutating func finish() throws {
    _ = try engine.finish()
  }

  static func head(_ lines: [ArraySlice<UInt8>], offset: Int, limits: HTTPLimits) throws
    -> HTTPRequestHead
  {
    let line = lines[0]
    let parts = line.split(separator: 32, omittingEmptySubsequences: false)
    guard parts.count == 3,
      HTTPSyntax.isToken(String(decoding: parts[0], as: UTF8.self)),
      !parts[1].isEmpty, parts[1].allSatisfy({ $0 > 0x20 && $0 < 0x7F }),
      parts[2].elementsEqual("HTTP/1.1".utf8) || parts[2].elementsEqual("HTTP/1.0".utf8)
    else {
      throw HTTPCodecError(.malformedStartLine(HTTPSyntax.quote(line)), offset: offset)
    }
    let headers = try HTTPMessageEngine.headerFields(lines[1...], offset: offset, limits: limits)
    return HTTPRequestHead(
      method: String(decoding: parts[0], as: UTF8.self),
      target: String(decoding: parts[1], as: UTF8.self),
      version: String(decoding: parts[2], as: UTF8.self), headers: headers)
  }
}
