import HTTPCodec
import Testing

/// Feeds `bytes` in pieces of `step` and then EOF, collecting events.
func parseResponse(
  _ bytes: [UInt8], step: Int = .max, method: String = "GET", limits: HTTPLimits = HTTPLimits()
) throws -> [HTTPResponseParser.Event] {
  var parser = HTTPResponseParser(requestMethod: method, limits: limits)
  var events: [HTTPResponseParser.Event] = []
  var index = 0
  while index < bytes.count {
    let end = min(bytes.count, index + max(1, min(step, bytes.count)))
    events += try parser.parse(Array(bytes[index..<end]))
    index = end
  }
  events += try parser.finish()
  return events
}

/// Joins body pieces so results compare independently of how the input was split.
func coalesced(_ events: [HTTPResponseParser.Event]) -> [HTTPResponseParser.Event] {
  var result: [HTTPResponseParser.Event] = []
  for event in events {
    if case .body(let more) = event, case .body(let previous)? = result.last {
      result[result.count - 1] = .body(previous + more)
    } else {
      result.append(event)
    }
  }
  return result
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

@Suite struct HTTPResponseParserTests {
  static let lengthResponse = bytes(
    "HTTP/1.1 200 OK\r\nContent-Type: text/csv\r\nContent-Length: 11\r\n\r\nhello world")

  @Test func contentLengthBodyParsesWhateverTheSplit() throws {
    let head = HTTPResponseHead(
      status: 200, reason: "OK",
      headers: ["Content-Type": "text/csv", "Content-Length": "11"])
    for step in [1, 2, 3, 7, 64, Int.max] {
      let events = coalesced(try parseResponse(Self.lengthResponse, step: step))
      #expect(events == [.head(head), .body(bytes("hello world")), .end], "step \(step)")
    }
  }

  @Test func chunkedBodyWithExtensionsAndTrailers() throws {
    let wire = bytes(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "5;name=value\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: yes\r\n\r\n")
    for step in [1, 5, Int.max] {
      let events = coalesced(try parseResponse(wire, step: step))
      #expect(events.count == 3)
      #expect(events.dropFirst().first == .body(bytes("hello world")))
      #expect(events.last == .end)
    }
  }

  @Test func bodyUntilCloseEndsAtEOF() throws {
    let events = coalesced(try parseResponse(bytes("HTTP/1.0 200 OK\r\n\r\nuntil the end")))
    guard case .head(let head) = events.first else { throw ParseFailure() }
    #expect(!head.keepAlive)
    #expect(events.dropFirst() == [.body(bytes("until the end")), .end])
  }

  @Test func headAnd204And304HaveNoBody() throws {
    let head = try parseResponse(
      bytes("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"), method: "HEAD")
    #expect(head.count == 2 && head.last == .end)
    for status in ["204 No Content", "304 Not Modified"] {
      let events = try parseResponse(bytes("HTTP/1.1 \(status)\r\n\r\n"))
      #expect(events.count == 2 && events.last == .end)
    }
  }

  @Test func interimResponsesAreSkippedAndKeepAliveResponsesFollow() throws {
    let wire =
      bytes("HTTP/1.1 100 Continue\r\n\r\n") + Self.lengthResponse
      + bytes("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
    let events = try parseResponse(wire)
    let heads = events.compactMap { event -> HTTPResponseHead? in
      if case .head(let head) = event { return head }
      return nil
    }
    #expect(heads.map(\.status) == [200, 404])
    #expect(heads.map(\.keepAlive) == [true, false])
    #expect(events.filter { $0 == .end }.count == 2)
  }

  @Test func switchingProtocolsKeepsTheFollowingBytes() throws {
    var parser = HTTPResponseParser()
    let events = try parser.parse(
      bytes("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n") + [0x81, 0x00])
    #expect(events.count == 2 && events.last == .end)
    #expect(parser.isUpgraded)
    #expect(try parser.parse([0x89]) == [])
    #expect(parser.takeUpgradedBytes() == [0x81, 0x00, 0x89])
  }

  @Test func limitsAreEnforcedWithTheOffsetAtFault() throws {
    let small = HTTPLimits(maxHeadBytes: 64, maxHeaderCount: 2, maxBodyBytes: 10)
    #expect(throws: HTTPCodecError(.headTooLarge(limit: 64), offset: 0)) {
      try parseResponse(
        bytes("HTTP/1.1 200 OK\r\nX: " + String(repeating: "a", count: 80)), limits: small)
    }
    #expect(throws: HTTPCodecError(.tooManyHeaders(limit: 2), offset: 0)) {
      try parseResponse(bytes("HTTP/1.1 200 OK\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n"), limits: small)
    }
    #expect(throws: HTTPCodecError(.bodyTooLarge(limit: 10), offset: 39)) {
      try parseResponse(
        bytes("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world"), limits: small)
    }
    #expect(throws: HTTPCodecError(.bodyTooLarge(limit: 10), offset: 29)) {
      try parseResponse(bytes("HTTP/1.1 200 OK\r\n\r\nhello world"), limits: small)
    }
    #expect(throws: HTTPCodecError(.bodyTooLarge(limit: 10), offset: 47)) {
      try parseResponse(
        bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nb\r\nhello world\r\n0\r\n\r\n"),
        limits: small)
    }
  }

  @Test(arguments: [
    ("HTTP/2 200 OK\r\n\r\n", "malformed start line"),
    ("HTTP/1.1 20 OK\r\n\r\n", "malformed start line"),
    ("HTTP/1.1 2000 OK\r\n\r\n", "malformed start line"),
    ("HTTP/1.1 200 OK\r\nNo colon here\r\n\r\n", "no colon"),
    ("HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", "not a token"),
    ("HTTP/1.1 200 OK\r\nA: 1\r\n folded\r\n\r\n", "obsolete line folding"),
    ("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", "Content-Length"),
    ("HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n", "Content-Length"),
    ("HTTP/1.1 200 OK\r\nContent-Length: 0x10\r\n\r\n", "Content-Length"),
    ("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "Transfer-Encoding"),
    ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "not hexadecimal"),
    ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXX", "expected CRLF"),
    (
      "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
      "5 bytes of a Content-Length body missing"
    ),
    ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", "inside a chunked body"),
    ("HTTP/1.1 200 O", "inside a message head"),
  ])
  func malformedResponsesGetAClearError(_ wire: String, _ expected: String) {
    #expect {
      try parseResponse(bytes(wire))
    } throws: { error in
      guard let error = error as? HTTPCodecError else { return false }
      return error.description.contains(expected) && error.offset != nil
    }
  }

  @Test func headerLookupIsCaseInsensitive() throws {
    let events = try parseResponse(
      bytes(
        "HTTP/1.1 200 OK\r\ncontent-type:  text/plain \r\nConnection: Keep-Alive, Upgrade\r\nContent-Length: 0\r\n\r\n"
      ))
    guard case .head(let head) = events.first else { throw ParseFailure() }
    #expect(head.headers["Content-Type"] == "text/plain")
    #expect(head.headers.tokens(for: "connection") == ["keep-alive", "upgrade"])
  }
}

struct ParseFailure: Error {}
