import FailClosedSupport
import Foundation
import TLS
import Testing

@Suite struct TestCertificateAuthorityTests {
  @Test func rootAndLeafExportAsPEMThatOpenSSLVerifies() throws {
    let authority = try TestCertificateAuthority()
    #expect(authority.rootCertificatePEM.hasPrefix("-----BEGIN CERTIFICATE-----"))
    let leaf = try authority.issue(for: ["relay.example", "*.relay.example", "10.0.0.7"])
    #expect(leaf.keyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----"))
    let again = try authority.issue(for: ["relay.example", "*.relay.example", "10.0.0.7"])
    #expect(again.certificatePEM == leaf.certificatePEM)

    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("fc-ca-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let root = directory.appendingPathComponent("root.pem").path
    let cert = directory.appendingPathComponent("leaf.pem").path
    try authority.writeRootCertificate(to: root)
    try Data(leaf.certificatePEM.utf8).write(to: URL(fileURLWithPath: cert))

    let verify = try run(
      "/usr/bin/openssl", ["verify", "-CAfile", root, "-verify_hostname", "relay.example", cert])
    #expect(verify.status == 0, "\(verify.output)")
    let wildcard = try run(
      "/usr/bin/openssl", ["verify", "-CAfile", root, "-verify_hostname", "x.relay.example", cert])
    #expect(wildcard.status == 0, "\(wildcard.output)")
    let address = try run(
      "/usr/bin/openssl", ["verify", "-CAfile", root, "-verify_ip", "10.0.0.7", cert])
    #expect(address.status == 0, "\(address.output)")
    let wrong = try run(
      "/usr/bin/openssl", ["verify", "-CAfile", root, "-verify_hostname", "evil.example", cert])
    #expect(wrong.status != 0)
    #expect(wrong.output.contains("hostname mismatch"))
  }

  @Test(arguments: [[], [""], ["a,DNS:b"], ["bad name"], ["x/y"]])
  func rejectsNamesThatAreNotDNSNamesOrAddresses(_ names: [String]) throws {
    let authority = try TestCertificateAuthority()
    #expect(throws: TLSError.self) { try authority.issue(for: names) }
  }

  @Test func trustRejectsTextWithoutCertificates() {
    #expect(throws: TLSError.invalidPEM(what: "no CERTIFICATE block in 5 bytes")) {
      try TLSClient(trust: .pem("hello"))
    }
  }
}

func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: executable)
  process.arguments = arguments
  let pipe = Pipe()
  process.standardOutput = pipe
  process.standardError = pipe
  try process.run()
  let data = pipe.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}

@Suite struct TestCertificateAuthorityTransferTests {
  @Test func anImportedAuthorityIssuesCertificatesTheOriginalsClientsTrust() async throws {
    let original = try TestCertificateAuthority(commonName: "run 42 CA")
    let imported = try TestCertificateAuthority(
      rootCertificatePEM: original.rootCertificatePEM, rootKeyPEM: try original.rootKeyPEM)
    #expect(imported.commonName == "run 42 CA")
    let server = try TLSServer(authority: imported)
    let client = try TLSClient(trust: .pem(original.rootCertificatePEM))
    let pair = try await TLSLoopback().handshake(
      client: client, server: server, serverName: "relay.example")
    try pair.client.get().close()
    try pair.server.get().close()
  }

  @Test func aKeyThatDoesNotMatchTheRootIsRefused() throws {
    let one = try TestCertificateAuthority()
    let other = try TestCertificateAuthority()
    #expect(
      throws: TLSError.invalidPEM(what: "the root key does not match the root certificate")
    ) {
      try TestCertificateAuthority(
        rootCertificatePEM: one.rootCertificatePEM, rootKeyPEM: try other.rootKeyPEM)
    }
    #expect(throws: TLSError.self) {
      try TestCertificateAuthority(rootCertificatePEM: one.rootCertificatePEM, rootKeyPEM: "x")
    }
  }
}
