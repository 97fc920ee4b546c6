import Foundation
import TestSupport
import Testing

@testable import TLS

/// The world's test CA key never leaves the harness's memory: no product code writes or hands
/// out the root key, and the only file written from the authority (world-ca.pem, in the run's
/// temporary directory) holds the certificate alone.
@Suite struct CAKeySafetyTests {
  @Test func theRootCertificateFileHoldsNoKey() throws {
    let authority = try TestCertificateAuthority(commonName: "failclosed key-safety CA")
    let path = NSTemporaryDirectory() + "fc-ca-\(getpid())-\(UUID().uuidString).pem"
    defer { try? FileManager.default.removeItem(atPath: path) }
    try authority.writeRootCertificate(to: path)
    let text = try String(contentsOfFile: path, encoding: .utf8)
    #expect(text.contains("-----BEGIN CERTIFICATE-----"))
    #expect(!text.contains("PRIVATE KEY"))
    // The canary: the key exists and would be recognised if it were written.
    #expect(try authority.rootKeyPEM.contains("PRIVATE KEY"))
  }

  @Test func noProductCodeReadsTheRootKey() throws {
    let sources = repositoryRoot + "/Sources"
    let enumerator = try #require(FileManager.default.enumerator(atPath: sources))
    var users: [String] = []
    for case let path as String in enumerator where path.hasSuffix(".swift") {
      let text = try String(contentsOfFile: sources + "/" + path, encoding: .utf8)
      if text.contains("rootKeyPEM") { users.append(path) }
    }
    // Only its definition (and the initialiser that takes one back, for a second process).
    #expect(users == ["Edges/TLS/TestCertificateAuthority.swift"], "\(users)")
  }
}
