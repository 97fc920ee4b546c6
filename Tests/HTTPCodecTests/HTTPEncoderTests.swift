import HTTPCodec
import Testing

@Suite struct HTTPEncoderTests {
  @Test func getRequestCarriesHostAndNoLength() throws {
    let request = HTTPRequest(
      target: "/nostr/relays.csv", host: "raw.example", headers: ["Accept": "text/csv"])
    #expect(
      String(decoding: try request.encoded(), as: UTF8.self)
        == "GET /nostr/relays.csv HTTP/1.1\r\nHost: raw.example\r\nAccept: text/csv\r\n\r\n")
  }

  @Test func postRequestCarriesContentLength() throws {
    let request = HTTPRequest(
      method: "POST", target: "/x", host: "a.example:8443", body: [1, 2, 3])
    #expect(
      try request.encoded()
        == Array("POST /x HTTP/1.1\r\nHost: a.example:8443\r\nContent-Length: 3\r\n\r\n".utf8)
        + [1, 2, 3])
    let empty = HTTPRequest(method: "POST", target: "/x", host: "a")
    #expect(String(decoding: try empty.encoded(), as: UTF8.self).contains("Content-Length: 0"))
  }

  @Test(arguments: [
    HTTPRequest(target: "/", host: "a", headers: ["X-Evil": "1\r\nHost: b"]),
    HTTPRequest(target: "/ HTTP/1.1", host: "a"),
    HTTPRequest(target: "/", host: "a\r\nX: y"),
    HTTPRequest(method: "G T", target: "/", host: "a"),
    HTTPRequest(target: "/", host: "a", headers: ["Host": "b"]),
    HTTPRequest(target: "/", host: "a", headers: ["Content-Length": "5"]),
    HTTPRequest(target: "/", host: "a", headers: ["Bad Name": "v"]),
  ])
  func refusesFieldsThatWouldInjectOrConflict(_ request: HTTPRequest) {
    #expect(throws: HTTPCodecError.self) { try request.encoded() }
  }

  @Test func responseEncodesLengthExceptForBodylessStatuses() throws {
    let ok = HTTPResponse(headers: ["Content-Type": "text/plain"], body: Array("hi".utf8))
    #expect(
      String(decoding: try ok.encoded(), as: UTF8.self)
        == "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi")
    let noContent = HTTPResponse(status: 204, body: Array("ignored".utf8))
    #expect(
      String(decoding: try noContent.encoded(), as: UTF8.self) == "HTTP/1.1 204 No Content\r\n\r\n")
  }
}
