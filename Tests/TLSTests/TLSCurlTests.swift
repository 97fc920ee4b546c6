import FailClosedSupport
import Foundation
import TLS
import Testing

/// Another TLS stack (curl with OpenSSL) trusts the exported root and reaches our server by name.
@Suite struct TLSCurlTests {
  @Test func curlTrustsTheExportedRootAndGetsTheNamedCertificate() async throws {
    let authority = try TestCertificateAuthority()
    let server = try TLSServer(authority: authority)
    let loopback = try TLSLoopback()
    let listener = loopback.listener
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("fc-curl-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let root = directory.appendingPathComponent("root.pem").path
    try authority.writeRootCertificate(to: root)

    async let served: String? = BlockingIO.run {
      let (socket, _) = try listener.accept()
      let connection = try server.accept(socket, timeout: 5)
      defer { connection.close() }
      connection.setTimeout(5)
      var request: [UInt8] = []
      while !request.ends(with: Array("\r\n\r\n".utf8)) && request.count < 65536 {
        let chunk = try connection.read(max: 4096)
        if chunk.isEmpty { break }
        request += chunk
      }
      try connection.write(
        Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello".utf8))
      return connection.serverName
    }
    let port = loopback.address.port
    let curl = try await BlockingIO.run {
      try run(
        "/usr/bin/curl",
        [
          "--silent", "--show-error", "--max-time", "10", "--cacert", root,
          "--resolve", "relay.example:\(port):127.0.0.1", "https://relay.example:\(port)/",
        ])
    }
    #expect(curl.status == 0, "\(curl.output)")
    #expect(curl.output == "hello")
    #expect(try await served == "relay.example")
  }

  @Test func curlRefusesAServerFromAnotherAuthority() async throws {
    let authority = try TestCertificateAuthority()
    let server = try TLSServer(authority: authority)
    let trusted = try TestCertificateAuthority(commonName: "trusted CA")
    let root = FileManager.default.temporaryDirectory
      .appendingPathComponent("fc-curl-\(UUID().uuidString).pem").path
    try trusted.writeRootCertificate(to: root)
    defer { try? FileManager.default.removeItem(atPath: root) }
    let loopback = try TLSLoopback()
    let listener = loopback.listener
    async let served: Void = BlockingIO.run {
      let (socket, _) = try listener.accept()
      _ = try? server.accept(socket, timeout: 5)  // curl aborts the handshake
    }
    let port = loopback.address.port
    let curl = try await BlockingIO.run {
      try run(
        "/usr/bin/curl",
        [
          "--silent", "--max-time", "10", "--cacert", root,
          "--resolve", "relay.example:\(port):127.0.0.1", "https://relay.example:\(port)/",
        ])
    }
    try await served
    #expect(curl.status == 60)  // CURLE_PEER_FAILED_VERIFICATION
  }
}

extension Array where Element: Equatable {
  func ends(with suffix: [Element]) -> Bool {
    count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
  }
}
