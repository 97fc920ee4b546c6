import FailClosedSupport
import Foundation
import TLS
import Testing

/// The server helper against curl: HTTPS with keep-alive, and the WebSocket upgrade answer.
@Suite struct HTTPServerCurlTests {
  @Test func curlFetchesTwiceOverOneTLSConnection() async throws {
    let authority = try TestCertificateAuthority()
    let server = try HTTPServer(
      tls: try TLSServer(authority: authority), body: Array("ok\n".utf8))
    server.start()
    defer { server.stop() }
    let root = FileManager.default.temporaryDirectory
      .appendingPathComponent("fc-curl-\(UUID().uuidString).pem").path
    try authority.writeRootCertificate(to: root)
    defer { try? FileManager.default.removeItem(atPath: root) }
    let port = server.address.port
    let curl = try await BlockingIO.run {
      try run(
        "/usr/bin/curl",
        [
          "--silent", "--show-error", "--max-time", "10", "--cacert", root,
          "--resolve", "dir.example:\(port):127.0.0.1",
          "https://dir.example:\(port)/a", "https://dir.example:\(port)/b",
        ])
    }
    #expect(curl.status == 0, "\(curl.output)")
    #expect(curl.output == "ok\nok\n")
    let requests = server.requests
    #expect(requests.map(\.head.target) == ["/a", "/b"])
    #expect(requests.allSatisfy { $0.serverName == "dir.example" })
    #expect(requests.allSatisfy { $0.host == "dir.example:\(port)" })
    // Both requests came from the same client port: one connection, kept alive.
    #expect(Set(requests.compactMap(\.peer)).count == 1)
  }

  @Test func curlSeesTheWebSocketUpgradeAnswer() async throws {
    let server = try HTTPServer(body: [])
    server.start()
    defer { server.stop() }
    let port = server.address.port
    let curl = try await BlockingIO.run {
      try run(
        "/usr/bin/curl",
        [
          "--silent", "--include", "--http1.1", "--max-time", "1",
          "-H", "Upgrade: websocket", "-H", "Connection: Upgrade",
          "-H", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "-H", "Sec-WebSocket-Version: 13",
          "http://127.0.0.1:\(port)/",
        ])
    }
    #expect(curl.output.hasPrefix("HTTP/1.1 101 Switching Protocols"), "\(curl.output)")
    #expect(curl.output.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="))
  }
}
