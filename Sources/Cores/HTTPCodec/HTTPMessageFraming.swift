/// How the body of a message is delimited (RFC 9112 section 6).
enum HTTPBodyFraming: Equatable {
  case none
  case length(Int)
  case chunked
  case untilClose
  /// 101 Switching Protocols: what follows belongs to another protocol.
  case upgraded
}

/// The framing engine shared by the request and response parsers: it finds the head, and then
/// cuts the body by length, by chunks, or by connection close, enforcing ``HTTPLimits``.
struct HTTPMessageEngine {
  enum Step {
    case needMore
    /// The head's lines without their CRLFs (start line first); `offset` is where it began.
    case head(lines: [ArraySlice<UInt8>], offset: Int)
    case body([UInt8])
    case end
  }

  private enum State {
    case head(scanFrom: Int)
    case fixed(remaining: Int)
    case chunkSize
    case chunkData(remaining: Int)
    case chunkDataEnd
    case trailers(count: Int)
    case untilClose
    case upgraded
  }

  let limits: HTTPLimits
  var buffer = ByteBuffer()
  private var state = State.head(scanFrom: 0)
  private var bodyBytes = 0
  private static let crlf: [UInt8] = [13, 10]

  init(limits: HTTPLimits) { self.limits = limits }

  var isUpgraded: Bool {
    if case .upgraded = state { return true }
    return false
  }

  /// Called after a head, with the framing its fields imply.
  mutating func beginBody(_ framing: HTTPBodyFraming) throws {
    bodyBytes = 0
    switch framing {
    case .none: state = .fixed(remaining: 0)
    case .length(let length):
      guard length <= limits.maxBodyBytes else {
        throw HTTPCodecError(.bodyTooLarge(limit: limits.maxBodyBytes), offset: buffer.offset)
      }
      state = .fixed(remaining: length)
    case .chunked: state = .chunkSize
    case .untilClose: state = .untilClose
    case .upgraded: state = .upgraded
    }
  }

  /// Skips an interim (1xx) response: the next head follows at once.
  mutating func expectAnotherHead() { state = .head(scanFrom: 0) }

  mutating func next() throws -> Step {
    switch state {
    case .head(let scanFrom):
      while buffer.count >= 2 && buffer[0] == 13 && buffer[1] == 10 { buffer.skip(2) }
      guard let end = buffer.firstIndex(of: [13, 10, 13, 10], from: scanFrom) else {
        if buffer.count > limits.maxHeadBytes {
          throw HTTPCodecError(.headTooLarge(limit: limits.maxHeadBytes), offset: buffer.offset)
        }
        state = .head(scanFrom: max(0, buffer.count - 3))
        return .needMore
      }
      guard end + 4 <= limits.maxHeadBytes else {
        throw HTTPCodecError(.headTooLarge(limit: limits.maxHeadBytes), offset: buffer.offset)
      }
      let offset = buffer.offset
      let head = buffer.take(end + 4)
      var lines: [ArraySlice<UInt8>] = []
      var lineStart = 0
      var index = 0
      while index + 1 < end + 2 {
        if head[index] == 13 && head[index + 1] == 10 {
          lines.append(head[lineStart..<index])
          index += 2
          lineStart = index
        } else {
          index += 1
        }
      }
      state = .fixed(remaining: 0)
      return .head(lines: lines, offset: offset)

    case .fixed(let remaining):
      if remaining == 0 {
        state = .head(scanFrom: 0)
        return .end
      }
      if buffer.isEmpty { return .needMore }
      let chunk = buffer.take(remaining)
      state = .fixed(remaining: remaining - chunk.count)
      return .body(chunk)

    case .chunkSize:
      guard let end = buffer.firstIndex(of: Self.crlf) else {
        if buffer.count > limits.maxChunkLineBytes {
          throw HTTPCodecError(
            .malformedChunk("size line longer than \(limits.maxChunkLineBytes) bytes"),
            offset: buffer.offset)
        }
        return .needMore
      }
      let offset = buffer.offset
      let line = buffer.take(end)
      buffer.skip(2)
      let size = try Self.chunkSize(line, offset: offset, limit: limits.maxBodyBytes - bodyBytes)
      state = size == 0 ? .trailers(count: 0) : .chunkData(remaining: size)
      return try next()

    case .chunkData(let remaining):
      if buffer.isEmpty { return .needMore }
      let chunk = buffer.take(remaining)
      bodyBytes += chunk.count
      state =
        remaining == chunk.count ? .chunkDataEnd : .chunkData(remaining: remaining - chunk.count)
      return .body(chunk)

    case .chunkDataEnd:
      if buffer.count < 2 { return .needMore }
      guard buffer[0] == 13 && buffer[1] == 10 else {
        throw HTTPCodecError(
          .malformedChunk(
            "expected CRLF after chunk data, got \(HTTPSyntax.quote(buffer.peek(2)))"),
          offset: buffer.offset)
      }
      buffer.skip(2)
      state = .chunkSize
      return try next()

    case .trailers(let count):
      guard let end = buffer.firstIndex(of: Self.crlf) else {
        if buffer.count > limits.maxChunkLineBytes {
          throw HTTPCodecError(
            .malformedChunk("trailer field longer than \(limits.maxChunkLineBytes) bytes"),
            offset: buffer.offset)
        }
        return .needMore
      }
      let offset = buffer.offset
      let line = buffer.take(end)
      buffer.skip(2)
      if line.isEmpty {
        state = .head(scanFrom: 0)
        return .end
      }
      guard count < limits.maxHeaderCount else {
        throw HTTPCodecError(.tooManyHeaders(limit: limits.maxHeaderCount), offset: offset)
      }
      _ = try Self.headerField(line[...], offset: offset)
      state = .trailers(count: count + 1)
      return try next()

    case .untilClose:
      if buffer.isEmpty { return .needMore }
      guard bodyBytes + buffer.count <= limits.maxBodyBytes else {
        throw HTTPCodecError(
          .bodyTooLarge(limit: limits.maxBodyBytes),
          offset: buffer.offset + limits.maxBodyBytes - bodyBytes)
      }
      let chunk = buffer.takeAll()
      bodyBytes += chunk.count
      return .body(chunk)

    case .upgraded:
      return .needMore
    }
  }

  /// The peer closed: ends a close-delimited body, or reports what was cut short.
  mutating func finish() throws -> [Step] {
    switch state {
    case .head:
      if buffer.isEmpty { return [] }
      throw HTTPCodecError(
        .truncated("inside a message head (\(buffer.count) bytes)"), offset: buffer.offset)
    case .fixed(let remaining):
      if remaining == 0 { return [] }
      throw HTTPCodecError(
        .truncated("with \(remaining) bytes of a Content-Length body missing"),
        offset: buffer.offset)
    case .chunkSize, .chunkData, .chunkDataEnd, .trailers:
      throw HTTPCodecError(.truncated("inside a chunked body"), offset: buffer.offset)
    case .untilClose:
      state = .head(scanFrom: 0)
      return [.end]
    case .upgraded:
      return []
    }
  }

  static func chunkSize(_ line: [UInt8], offset: Int, limit: Int) throws -> Int {
    let sizeText = line.prefix { $0 != UInt8(ascii: ";") }
    let digits = Array(sizeText.reversed().drop { $0 == 32 || $0 == 9 }.reversed())
    guard !digits.isEmpty, digits.count <= 16,
      let size = Int(String(decoding: digits, as: UTF8.self), radix: 16), size >= 0,
      digits.allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "-") })
    else {
      throw HTTPCodecError(
        .malformedChunk("size line \(HTTPSyntax.quote(line)) is not hexadecimal"), offset: offset)
    }
    guard size <= limit else {
      throw HTTPCodecError(.bodyTooLarge(limit: limit), offset: offset)
    }
    return size
  }

  /// Parses "Name: value" (no obsolete line folding, no space before the colon).
  static func headerField(_ line: ArraySlice<UInt8>, offset: Int) throws -> (
    name: String, value: String
  ) {
    guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
      throw HTTPCodecError(
        .malformedHeader("no colon in \(HTTPSyntax.quote(line))"), offset: offset)
    }
    let name = line[line.startIndex..<colon]
    guard !name.isEmpty, name.allSatisfy(HTTPSyntax.isTokenByte) else {
      throw HTTPCodecError(
        .malformedHeader("field name \(HTTPSyntax.quote(name)) is not a token"), offset: offset)
    }
    let value = line[(colon + 1)...]
    guard value.allSatisfy(HTTPSyntax.isFieldValueByte) else {
      throw HTTPCodecError(
        .malformedHeader("control character in the value of \(HTTPSyntax.quote(name))"),
        offset: offset)
    }
    return (
      String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self).trimmingSpaces()
    )
  }

  /// Parses every field line after the start line.
  static func headerFields(_ lines: ArraySlice<ArraySlice<UInt8>>, offset: Int, limits: HTTPLimits)
    throws -> HTTPHeaders
  {
    guard lines.count <= limits.maxHeaderCount else {
      throw HTTPCodecError(.tooManyHeaders(limit: limits.maxHeaderCount), offset: offset)
    }
    var headers = HTTPHeaders()
    for line in lines {
      let lineOffset = offset + line.startIndex
      if let first = line.first, first == 32 || first == 9 {
        throw HTTPCodecError(.malformedHeader("obsolete line folding"), offset: lineOffset)
      }
      let field = try headerField(line, offset: lineOffset)
      headers.add(field.name, field.value)
    }
    return headers
  }

  /// The framing that Content-Length and Transfer-Encoding select; nil when neither is present.
  static func declaredFraming(_ headers: HTTPHeaders, offset: Int, isRequest: Bool) throws
    -> HTTPBodyFraming?
  {
    let codings = headers.tokens(for: "Transfer-Encoding")
    let lengths = headers.values(for: "Content-Length")
    if !codings.isEmpty {
      guard codings == ["chunked"] else {
        throw HTTPCodecError(
          .unsupportedTransferEncoding(codings.joined(separator: ", ")), offset: offset)
      }
      if isRequest && !lengths.isEmpty {
        throw HTTPCodecError(
          .invalidContentLength("both Content-Length and Transfer-Encoding in a request"),
          offset: offset)
      }
      return .chunked
    }
    guard !lengths.isEmpty else { return nil }
    let values = Set(lengths.flatMap { $0.split(separator: ",") }.map { $0.trimmingSpaces() })
    guard values.count == 1, let text = values.first, !text.isEmpty, text.count <= 18,
      text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let length = Int(text)
    else {
      throw HTTPCodecError(.invalidContentLength(lengths.joined(separator: ", ")), offset: offset)
    }
    return .length(length)
  }
}
