import FailClosedSupport
import Foundation
import TestSupport
import Testing

@testable import Testnet

/// The certificate's fields the cache checks, from text: a certificate tor-gencert made parses
/// (positive control); each missing or malformed field is named (canaries).
@Suite struct AuthorityCertificateTests {
  static let text = """
    dir-key-certificate-version 3
    dir-address 10.66.1.101:9030
    fingerprint ED4744AF06C8B4DE22C11F0E0A1B17F97BFE7525
    dir-key-published 2026-12-02 00:19:09
    dir-key-expires 2027-12-02 00:19:09
    dir-identity-key
    -----BEGIN RSA PUBLIC KEY-----
    MIIBigKCAYEAvvoRi8L8ywulMiwEm7/JH5HkHhiTuPriXHTZGs7h7xUIQigJB7Nq
    XqOKP4eloiS9nd2G5CI+hub4rHLG3Jh6HVd7609dFsb1mH7amRzBd9oaJToNnbWf
    -----END RSA PUBLIC KEY-----
    dir-signing-key
    -----BEGIN RSA PUBLIC KEY-----
    MIIBCgKCAQEAwl9VBLz8fuT5fvfDuFS8j/4IQ5FRfkHXUK1J69fwbBkEzW8L06hy
    -----END RSA PUBLIC KEY-----
    dir-key-crosscert
    """

  @Test func aCertificateParses() throws {
    let certificate = try AuthorityCertificate(text: Self.text)
    #expect(certificate.fingerprint == "ED4744AF06C8B4DE22C11F0E0A1B17F97BFE7525")
    #expect(certificate.address == "10.66.1.101:9030")
    #expect(certificate.expires == Date(timeIntervalSince1970: 1_827_706_749))
    #expect(
      certificate.signingKey == "MIIBCgKCAQEAwl9VBLz8fuT5fvfDuFS8j/4IQ5FRfkHXUK1J69fwbBkEzW8L06hy")
    #expect(certificate.identityKey.hasPrefix("MIIBigKCAYEAvvoRi8L8"))
  }

  @Test(arguments: [
    ("dir-key-certificate-version 3\n", "junk\n", "first line"),
    ("fingerprint ED4744AF06C8B4DE22C11F0E0A1B17F97BFE7525", "fingerprint ED47", "40 hex"),
    ("dir-address 10.66.1.101:9030\n", "", "'dir-address'"),
    ("dir-key-expires 2027-12-02 00:19:09", "dir-key-expires 2027-13-02 00:19:09", "UTC time"),
    ("dir-key-expires 2027-12-02 00:19:09", "dir-key-expires soon", "UTC time"),
    ("dir-signing-key\n", "", "'dir-signing-key'"),
    ("-----END RSA PUBLIC KEY-----\ndir-key-crosscert", "dir-key-crosscert", "'dir-signing-key'"),
  ])
  func aMalformedCertificateIsNamed(field: String, replacement: String, message: String) {
    let text = Self.text.replacingOccurrences(of: field, with: replacement)
    #expect(text != Self.text)
    #expect {
      _ = try AuthorityCertificate(text: text)
    } throws: { error in
      "\(error)".contains(message)
    }
  }
}

/// Whether tor-gencert and openssl are installed.
let haveKeyTools: Bool = ["tor-gencert", "openssl"].allSatisfy { tool in
  ["/usr/bin/", "/usr/sbin/", "/bin/"].contains {
    FileManager.default.isExecutableFile(atPath: $0 + tool)
  }
}

/// The authorities' key cache on real keys (tor-gencert and openssl): a valid entry is reused,
/// byte for byte and without tor-gencert (positive control); an expired certificate, a
/// corrupt or swapped key, a tampered fingerprint or another address is made again (canaries);
/// a file that cannot be read is an error naming it.
@Suite(
  .serialized,
  .needs("needs tor-gencert and openssl (tools/install-deps)", if: haveKeyTools))
struct AuthorityKeyCacheTests {
  static var haveTools: Bool { haveKeyTools }

  static let node = TestnetNode(
    name: "auth1", role: .authority, address: "127.0.0.1", orPort: 27301, dirPort: 27401,
    controlPort: 27501)

  /// One authority's keys, made once for the suite (tor-gencert takes seconds under load).
  static let made: Result<(keys: String, v3Identity: String, fingerprint: String), any Error> =
    Result {
      let data = NSTemporaryDirectory() + "fc-keycache-made-\(getpid())"
      try FileManager.default.createDirectory(
        atPath: data + "/keys", withIntermediateDirectories: true)
      let v3Identity = try TorNetwork.makeCertificate(node, data)
      let fingerprint = try TorNetwork.makeIdentityKey(data)
      return (data + "/keys", v3Identity, fingerprint)
    }

  /// A fresh directory holding a cache with the suite's keys stored, and an empty keys
  /// directory to restore into.
  func freshCache() throws -> (cache: AuthorityKeyCache, keys: String, base: String) {
    try #require(Self.haveTools, "needs tor-gencert and openssl (tools/install-deps)")
    let made = try Self.made.get()
    let base = NSTemporaryDirectory() + "fc-keycache-\(getpid())-\(UUID().uuidString.prefix(8))"
    try FileManager.default.createDirectory(
      atPath: base + "/keys", withIntermediateDirectories: true)
    let cache = AuthorityKeyCache(directory: base + "/cache")
    try cache.store(Self.node, from: made.keys)
    return (cache, base + "/keys", base)
  }

  func file(_ cache: AuthorityKeyCache, _ name: String) -> String {
    cache.entry(for: Self.node) + "/" + name
  }

  @Test func aValidEntryIsReusedByteForByte() throws {
    let (cache, keys, base) = try freshCache()
    defer { try? FileManager.default.removeItem(atPath: base) }
    let made = try Self.made.get()
    let lookup = try cache.restore(Self.node, into: keys)
    #expect(lookup == .reused(v3Identity: made.v3Identity, fingerprint: made.fingerprint))
    for name in AuthorityKeyCache.files {
      #expect(
        FileManager.default.contents(atPath: keys + "/" + name)
          == FileManager.default.contents(atPath: made.keys + "/" + name), "\(name)")
    }
  }

  @Test func noEntryIsUnusable() throws {
    let (cache, keys, base) = try freshCache()
    defer { try? FileManager.default.removeItem(atPath: base) }
    try FileManager.default.removeItem(atPath: cache.entry(for: Self.node))
    #expect(try cache.restore(Self.node, into: keys) == .unusable("no entry"))
    #expect(!FileManager.default.fileExists(atPath: keys + "/authority_certificate"))
  }

  @Test func anExpiringCertificateIsNotReused() throws {
    let (cache, keys, base) = try freshCache()
    defer { try? FileManager.default.removeItem(atPath: base) }
    let certificate = try AuthorityCertificate(
      text: String(contentsOfFile: file(cache, "authority_certificate"), encoding: .utf8))
    // Reused a week and a minute before it expires; not a minute later.
    let early = certificate.expires.addingTimeInterval(-AuthorityKeyCache.minimumValidity - 60)
    #expect(try cache.restore(Self.node, into: keys, now: early).isReused)
    let late = certificate.expires.addingTimeInterval(-AuthorityKeyCache.minimumValidity + 60)
    let lookup = try cache.restore(Self.node, into: keys, now: late)
    #expect(lookup.reason?.contains("expires") == true, "\(lookup)")
  }

  @Test(arguments: [
    ("authority_signing_key", "a truncated signing key"),
    ("secret_id_key", "a truncated relay identity key"),
    ("authority_certificate", "a truncated certificate"),
  ])
  func aCorruptFileIsNotReused(name: String, what: String) throws {
    let (cache, keys, base) = try freshCache()
    defer { try? FileManager.default.removeItem(atPath: base) }
    let path = file(cache, name)
    let text = try String(contentsOfFile: path, encoding: .utf8)
    try String(text.prefix(text.count / 2)).write(toFile: path, atomically: true, encoding: .utf8)
    let lookup = try cache.restore(Self.node, into: keys)
    #expect(lookup.reason?.contains(cache.entry(for: Self.node)) == true, "\(what): \(lookup)")
    #expect(!lookup.isReused, "\(what)")
  }

  @Test func keysTheCertificateDoesNotNameAreNotReused() throws {
    let (cache, keys, base) = try freshCache()
    defer { try? FileManager.default.removeItem(atPath: base) }
    // Another valid RSA key as the signing key: it loads, but it is not the certified one.
    try ToolRunner.run([
      "openssl", "genrsa", "-traditional", "-out", file(cache, "authority_signing_key"), "1024",
    ])
    let lookup = try cache.restore(Self.node, into: keys)
    #expect(lookup.reason?.contains("not the key the certificate names") == true, "\(lookup)")
  }

  @Test func aTamperedFingerprintIsNotReused() throws {
    let (cache, keys, base) = try freshCache()
    defer { try? FileManager.default.removeItem(atPath: base) }
    let made = try Self.made.get()
    let path = file(cache, "authority_certificate")
    let text = try String(contentsOfFile: path, encoding: .utf8)
    let other = String(made.v3Identity.reversed())
    try text.replacingOccurrences(of: made.v3Identity, with: other).write(
      toFile: path, atomically: true, encoding: .utf8)
    let lookup = try cache.restore(Self.node, into: keys)
    #expect(lookup.reason?.contains("does not hash to its fingerprint") == true, "\(lookup)")
  }

  @Test func anEntryForAnotherAddressIsNotReused() throws {
    let (cache, keys, base) = try freshCache()
    defer { try? FileManager.default.removeItem(atPath: base) }
    let moved = TestnetNode(
      name: "auth1", role: .authority, address: "127.0.0.2", orPort: 27301, dirPort: 27401,
      controlPort: 27501)
    try FileManager.default.copyItem(
      atPath: cache.entry(for: Self.node), toPath: cache.entry(for: moved))
    let lookup = try cache.restore(moved, into: keys)
    #expect(lookup.reason?.contains("names 127.0.0.1:27401, not 127.0.0.2:27401") == true)
  }

  @Test func anUnreadableFileIsAnErrorNamingIt() throws {
    let (cache, keys, base) = try freshCache()
    defer { try? FileManager.default.removeItem(atPath: base) }
    let path = file(cache, "authority_signing_key")
    try FileManager.default.removeItem(atPath: path)
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    #expect {
      _ = try cache.restore(Self.node, into: keys)
    } throws: { error in
      guard case .unreadableCache(let named, _) = error as? TestnetError else { return false }
      return named == path && "\(error)".contains(path)
    }
  }

  /// Through the network's key step: made and stored, then reused (same identities, no new
  /// certificate), then made again once the stored certificate has expired.
  @Test func prepareMakesStoresReusesAndRemakes() throws {
    try #require(Self.haveTools, "needs tor-gencert and openssl (tools/install-deps)")
    let base = NSTemporaryDirectory() + "fc-keycache-net-\(getpid())-\(UUID().uuidString.prefix(8))"
    defer { try? FileManager.default.removeItem(atPath: base) }
    let cache = AuthorityKeyCache(directory: base + "/cache")
    let plan = TestnetPlan(nodes: [Self.node])
    let first = TorNetwork(plan: plan, directory: base + "/net1", keyCache: cache)
    try first.prepare()
    #expect(first.reusedKeys.isEmpty)
    let second = TorNetwork(plan: plan, directory: base + "/net2", keyCache: cache)
    try second.prepare()
    #expect(second.reusedKeys == ["auth1"])
    #expect(second.identities == first.identities)
    // Expired: the stored certificate's date moved into the past.
    let path = cache.entry(for: Self.node) + "/authority_certificate"
    let text = try String(contentsOfFile: path, encoding: .utf8)
    let expires = try #require(
      text.split(separator: "\n").first { $0.hasPrefix("dir-key-expires ") })
    try text.replacingOccurrences(of: expires, with: "dir-key-expires 2020-01-01 00:00:00").write(
      toFile: path, atomically: true, encoding: .utf8)
    let third = TorNetwork(plan: plan, directory: base + "/net3", keyCache: cache)
    try third.prepare()
    #expect(third.reusedKeys.isEmpty)
    #expect(third.identities.first?.v3Identity != first.identities.first?.v3Identity)
    // The remade keys were stored over the expired ones.
    let fourth = TorNetwork(plan: plan, directory: base + "/net4", keyCache: cache)
    try fourth.prepare()
    #expect(fourth.reusedKeys == ["auth1"])
    #expect(fourth.identities == third.identities)
  }
}

extension AuthorityKeyCache.Lookup {
  var isReused: Bool {
    if case .reused = self { return true }
    return false
  }
  var reason: String? {
    if case .unusable(let reason) = self { return reason }
    return nil
  }
}
