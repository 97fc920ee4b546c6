import HTTPCodec
import Testing

@Suite struct HTTPRequestParserTests {
  @Test func requestRoundTripsThroughEncoderAndParser() throws {
    let request = HTTPRequest(
      method: "POST", target: "/submit?a=1", host: "relay.example",
      headers: ["User-Agent": "failclosed"], body: bytes("payload"))
    var parser = HTTPRequestParser()
    let events = try parser.parse(try request.encoded())
    guard case .head(let head) = events.first else { throw ParseFailure() }
    #expect(head.method == "POST")
    #expect(head.target == "/submit?a=1")
    #expect(head.headers["Host"] == "relay.example")
    #expect(head.keepAlive)
    #expect(events.dropFirst() == [.body(bytes("payload")), .end])
  }

  @Test func pipelinedRequestsContinueOnTheNextParseCall() throws {
    var parser = HTTPRequestParser()
    let two = bytes("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n")
    let first = try parser.parse(two)
    let second = try parser.parse([])
    #expect(first.count == 2 && second.count == 2)
    guard case .head(let b) = second.first else { throw ParseFailure() }
    #expect(b.target == "/b")
  }

  @Test func chunkedRequestBodyIsDecoded() throws {
    var parser = HTTPRequestParser()
    let events = try parser.parse(
      bytes("PUT / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"))
    #expect(events.dropFirst() == [.body(bytes("abc")), .end])
  }

  @Test(arguments: [
    "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
    "GET /  HTTP/1.1\r\n\r\n",
    "GET / HTTP/2.0\r\n\r\n",
    "G(T / HTTP/1.1\r\n\r\n",
  ])
  func malformedRequestsAreRefused(_ wire: String) {
    var parser = HTTPRequestParser()
    #expect(throws: HTTPCodecError.self) { try parser.parse(bytes(wire)) }
  }
}
