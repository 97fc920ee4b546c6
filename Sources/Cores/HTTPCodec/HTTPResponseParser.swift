/// Incremental HTTP/1.1 response parser (client side): feed bytes as they arrive, get the head,
/// body pieces and the end of each response; call ``finish()`` when the server closes.
/// Bodies are delimited by Content-Length, chunked coding, or the connection's close.
public struct HTTPResponseParser: Sendable {
  public enum Event: Equatable, Sendable {
    case head(HTTPResponseHead)
    case body([UInt8])
    case end
  }

  /// The method of the request being answered: a response to HEAD has no body.
  public var requestMethod: String
  private var engine: HTTPMessageEngine

  public init(requestMethod: String = "GET", limits: HTTPLimits = HTTPLimits()) {
    self.requestMethod = requestMethod
    engine = HTTPMessageEngine(limits: limits)
  }

  /// After a 101 response, the bytes that followed it (the start of the upgraded protocol).
  public var isUpgraded: Bool { engine.isUpgraded }

  public mutating func takeUpgradedBytes() -> [UInt8] { engine.buffer.takeAll() }

  public mutating func parse(_ bytes: [UInt8]) throws -> [Event] {
    engine.buffer.append(bytes)
    var events: [Event] = []
    while true {
      switch try engine.next() {
      case .needMore:
        return events
      case .head(let lines, let offset):
        let head = try Self.head(lines, offset: offset, limits: engine.limits)
        if head.status >= 100 && head.status < 200 && head.status != 101 {
          engine.expectAnotherHead()  // 100 Continue and friends: interim, no body
          continue
        }
        events.append(.head(head))
        let framing = try framing(for: head, offset: offset)
        try engine.beginBody(framing)
        if framing == .upgraded {
          events.append(.end)
          return events
        }
      case .body(let bytes):
        events.append(.body(bytes))
      case .end:
        events.append(.end)
      }
    }
  }

  /// The server closed the connection: ends a close-delimited body, or throws
  /// ``HTTPCodecError/Reason/truncated(_:)`` when a response was cut short.
  public mutating func finish() throws -> [Event] {
    try engine.finish().compactMap { step in
      if case .end = step { return .end }
      return nil
    }
  }

  private func framing(for head: HTTPResponseHead, offset: Int) throws -> HTTPBodyFraming {
    if head.status == 101 { return .upgraded }
    if requestMethod == "HEAD" || head.status == 204 || head.status == 304 { return .none }
    return try HTTPMessageEngine.declaredFraming(head.headers, offset: offset, isRequest: false)
      ?? .untilClose
  }

  static func head(_ lines: [ArraySlice<UInt8>], offset: Int, limits: HTTPLimits) throws
    -> HTTPResponseHead
  {
    let line = lines[0]
    let text = String(decoding: line, as: UTF8.self)
    let parts = text.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
    guard parts.count >= 2, parts[0] == "HTTP/1.1" || parts[0] == "HTTP/1.0",
      parts[1].count == 3, parts[1].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
      let status = Int(parts[1]), status >= 100,
      line.allSatisfy(HTTPSyntax.isFieldValueByte)
    else {
      throw HTTPCodecError(.malformedStartLine(HTTPSyntax.quote(line)), offset: offset)
    }
    let headers = try HTTPMessageEngine.headerFields(lines[1...], offset: offset, limits: limits)
    return HTTPResponseHead(
      version: String(parts[0]), status: status,
      reason: parts.count > 2 ? String(parts[2]) : "", headers: headers)
  }
}
