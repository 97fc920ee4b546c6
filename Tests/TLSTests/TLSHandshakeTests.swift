import FailClosedSupport
import Foundation
import TLS
import TestSupport
import Testing

@Suite struct TLSHandshakeTests {
  @Test func handshakeOnLoopbackCarriesBytesBothWays() async throws {
    let authority = try TestCertificateAuthority()
    let server = try TLSServer(authority: authority)
    let client = try TLSClient(trust: .pem(authority.rootCertificatePEM))
    let pair = try await TLSLoopback().handshake(
      client: client, server: server, serverName: "relay.example")
    let clientEnd = try pair.client.get()
    let serverEnd = try pair.server.get()
    defer {
      clientEnd.close()
      serverEnd.close()
    }
    #expect(clientEnd.protocolVersion == "TLSv1.3")
    #expect(serverEnd.serverName == "relay.example")
    let hello = Array("hello over TLS".utf8)
    try await BlockingIO.run { try clientEnd.write(hello) }
    #expect(try await BlockingIO.run { try serverEnd.read(max: 100) } == hello)
    let big = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    async let sent: Void = BlockingIO.run { try serverEnd.write(big) }
    let received = try await BlockingIO.run {
      var bytes: [UInt8] = []
      while bytes.count < big.count {
        let chunk = try clientEnd.read(max: 65536)
        if chunk.isEmpty { break }
        bytes += chunk
      }
      return bytes
    }
    try await sent
    #expect(received == big)
    serverEnd.close()
    #expect(try await BlockingIO.run { try clientEnd.read(max: 10) }.isEmpty)
  }

  @Test func wrongHostnameIsRejectedNamingTheMismatch() async throws {
    let authority = try TestCertificateAuthority()
    let server = try TLSServer(authority: authority, presenting: ["other.example"])
    let client = try TLSClient(trust: .pem(authority.rootCertificatePEM))
    let pair = try await TLSLoopback().handshake(
      client: client, server: server, serverName: "relay.example")
    let error = try #require(pair.client.failure as? TLSError)
    guard case .verificationFailed(let name, _, let reason) = error else {
      Issue.record("expected a verification failure, got \(error)")
      return
    }
    #expect(name == "relay.example")
    #expect(reason == "hostname mismatch")
    #expect(error.description.contains("hostname mismatch"))
  }

  @Test func certificateFromAnotherAuthorityIsRejected() async throws {
    let trusted = try TestCertificateAuthority(commonName: "trusted CA")
    let impostor = try TestCertificateAuthority(commonName: "impostor CA")
    let server = try TLSServer(authority: impostor)
    let client = try TLSClient(trust: .pem(trusted.rootCertificatePEM))
    let pair = try await TLSLoopback().handshake(
      client: client, server: server, serverName: "relay.example")
    let error = try #require(pair.client.failure as? TLSError)
    guard case .verificationFailed(_, let code, let reason) = error else {
      Issue.record("expected a verification failure, got \(error)")
      return
    }
    #expect(code == 20)  // X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY
    #expect(reason == "unable to get local issuer certificate")
  }

  @Test func ipLiteralIsVerifiedAgainstTheAddressNotSent() async throws {
    let authority = try TestCertificateAuthority()
    // No SNI for an address: the server falls back to its default name, which is not the IP.
    let server = try TLSServer(authority: authority, defaultName: "localhost")
    let client = try TLSClient(trust: .pem(authority.rootCertificatePEM))
    let pair = try await TLSLoopback().handshake(
      client: client, server: server, serverName: "127.0.0.1")
    let error = try #require(pair.client.failure as? TLSError)
    guard case .verificationFailed(_, _, let reason) = error else {
      Issue.record("expected a verification failure, got \(error)")
      return
    }
    #expect(reason == "IP address mismatch")
    let ipServer = try TLSServer(authority: authority, defaultName: "127.0.0.1")
    let ok = try await TLSLoopback().handshake(
      client: client, server: ipServer, serverName: "127.0.0.1")
    let connection = try ok.client.get()
    #expect(connection.serverName == nil)
    connection.close()
  }

  @Test func sniSelectsTheCertificateForEachName() async throws {
    let authority = try TestCertificateAuthority()
    let server = try TLSServer(authority: authority)
    let client = try TLSClient(trust: .pem(authority.rootCertificatePEM))
    for name in ["alpha.example", "beta.example", "alpha.example"] {
      let pair = try await TLSLoopback().handshake(client: client, server: server, serverName: name)
      let clientEnd = try pair.client.get()
      let serverEnd = try pair.server.get()
      #expect(clientEnd.serverName == name)
      #expect(serverEnd.serverName == name)
      clientEnd.close()
      serverEnd.close()
    }
    // localhost (the default, issued at start), alpha and beta: alpha's second use hit the cache.
    #expect(authority.issuedCount == 3)
  }

  @Test func readTimesOutAndCloseWakesABlockedReader() async throws {
    let authority = try TestCertificateAuthority()
    let server = try TLSServer(authority: authority)
    let client = try TLSClient(trust: .pem(authority.rootCertificatePEM))
    let pair = try await TLSLoopback().handshake(
      client: client, server: server, serverName: "a.test")
    let clientEnd = try pair.client.get()
    let serverEnd = try pair.server.get()
    defer { serverEnd.close() }
    clientEnd.setTimeout(0.05)
    await #expect(throws: TLSError.timedOut(operation: "read", seconds: 0.05)) {
      try await BlockingIO.run { try clientEnd.read(max: 10) }
    }
    clientEnd.setTimeout(nil)
    let reader = PollingThread()
    async let blocked = BlockingIO.run {
      reader.enter()
      return try clientEnd.read(max: 10)
    }
    // Closed once the reader waits in poll(2): a close before its read would pass unblocked.
    #expect(await waitUntil(timeout: 5) { reader.isAsleepInPoll })
    clientEnd.close()
    #expect(try await blocked.isEmpty)
    #expect(throws: TLSError.connectionClosed(operation: "write")) {
      try clientEnd.write([1])
    }
  }
}

@Suite struct TLSTrustAndVersionTests {
  @Test func systemStoreDoesNotTrustTheTestAuthority() async throws {
    let authority = try TestCertificateAuthority()
    let server = try TLSServer(authority: authority)
    let client = try TLSClient(trust: .system)
    let pair = try await TLSLoopback().handshake(
      client: client, server: server, serverName: "relay.example")
    let error = try #require(pair.client.failure as? TLSError)
    guard case .verificationFailed(_, let code, _) = error else {
      Issue.record("expected a verification failure, got \(error)")
      return
    }
    #expect(code == 20)  // X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY
  }

  @Test func serverRefusesTLSBelow1Point2() async throws {
    let authority = try TestCertificateAuthority()
    let server = try TLSServer(authority: authority)
    let loopback = try TLSLoopback()
    let listener = loopback.listener
    async let accepted: Result<TLSConnection, any Error> = TLSLoopback.result {
      try await BlockingIO.run {
        let (socket, _) = try listener.accept()
        return try server.accept(socket, timeout: 5)
      }
    }
    let port = loopback.address.port
    let curl = try await BlockingIO.run {
      try run(
        "/usr/bin/curl",
        [
          "--silent", "--max-time", "5", "--insecure", "--tlsv1.0", "--tls-max", "1.1",
          "--resolve", "a.example:\(port):127.0.0.1", "https://a.example:\(port)/",
        ])
    }
    #expect(curl.status == 35)  // CURLE_SSL_CONNECT_ERROR
    let error = try #require(await accepted.failure as? TLSError)
    guard case .handshakeFailed(_, let detail) = error else {
      Issue.record("expected a handshake failure, got \(error)")
      return
    }
    #expect(detail.contains("unsupported protocol"), "\(detail)")
  }

  @Test(arguments: [
    ("relay.example", "relay.example"), ("relay.example:8443", "relay.example"),
    ("[fd00::1]:443", "fd00::1"), ("fd00::1", "fd00::1"),
  ])
  func serverNameIsTheHostWithoutItsPort(_ host: String, _ expected: String) {
    #expect(HTTPSClient.hostWithoutPort(host) == expected)
  }
}

extension Result {
  var failure: Failure? {
    if case .failure(let error) = self { return error }
    return nil
  }
}
