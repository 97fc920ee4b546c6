import FailClosedSupport
import Foundation

/// The private network's authority keys kept between runs (under the user's cache directory,
/// ``UserCacheDirectory``), one entry per authority address and DirPort (the certificate names
/// them). Making them is three tor-gencert RSA-3072 identity keys: 0.5-1.3 s of CPU each, 2-10
/// s of the network's start on the loaded two-core machine (docs/performance.md). An entry is
/// used only when every file reads, the certificate parses, names this address, is valid for
/// at least ``minimumValidity`` more, and its keys are the ones it certifies (the identity key
/// hashes to its fingerprint, the signing key is the one it names, the relay identity key
/// loads); anything else is made again and stored over it. A file that exists but cannot be
/// read is an error naming it: the cache is the user's, and a silent remake would hide it.
public struct AuthorityKeyCache: Sendable {
  public let directory: String

  /// A certificate that expires sooner than this is made again (a run lasts minutes).
  public static let minimumValidity: TimeInterval = 7 * 24 * 3600

  /// The files an authority's tor reads (the certificate, its signing key, the relay identity
  /// key the DirAuthority line's fingerprint names); tor-gencert's identity key signs
  /// certificates and tor never reads it.
  public static let files = ["authority_certificate", "authority_signing_key", "secret_id_key"]

  public init(directory: String) { self.directory = directory }

  /// `<cache>/testnet-authority-keys` under ``UserCacheDirectory``.
  public static var user: AuthorityKeyCache {
    AuthorityKeyCache(directory: UserCacheDirectory.root() + "/testnet-authority-keys")
  }

  /// The entry of the authority at `node`'s address and DirPort.
  public func entry(for node: TestnetNode) -> String {
    "\(directory)/\(node.address)-\(node.dirPort ?? 9030)"
  }

  /// What a look-up found.
  public enum Lookup: Equatable, Sendable {
    /// The entry's keys were copied into the node's keys directory.
    case reused(v3Identity: String, fingerprint: String)
    /// No entry, or one that may not be used (why); the keys must be made.
    case unusable(String)
  }

  /// Checks `node`'s entry and, when it may be used, copies its keys into `keysDirectory`.
  /// Throws ``TestnetError/unreadableCache(path:reason:)`` when a file of the entry exists but
  /// cannot be read.
  public func restore(_ node: TestnetNode, into keysDirectory: String, now: Date = Date())
    throws -> Lookup
  {
    let entry = entry(for: node)
    guard FileManager.default.fileExists(atPath: entry) else { return .unusable("no entry") }
    var contents: [String: Data] = [:]
    for file in Self.files {
      let path = entry + "/" + file
      guard FileManager.default.fileExists(atPath: path) else {
        return .unusable("\(path) is missing")
      }
      do {
        contents[file] = try Data(contentsOf: URL(fileURLWithPath: path))
      } catch {
        throw TestnetError.unreadableCache(path: path, reason: "\(error)")
      }
    }
    let certificatePath = entry + "/authority_certificate"
    let certificate: AuthorityCertificate
    do {
      certificate = try AuthorityCertificate(
        text: String(decoding: contents["authority_certificate"]!, as: UTF8.self))
    } catch {
      return .unusable("\(certificatePath): \(error)")
    }
    let address = "\(node.address):\(node.dirPort ?? 9030)"
    guard certificate.address == address else {
      return .unusable("\(certificatePath) names \(certificate.address), not \(address)")
    }
    guard certificate.expires > now.addingTimeInterval(Self.minimumValidity) else {
      return .unusable("\(certificatePath) expires \(certificate.expires)")
    }
    let fingerprint: String
    do {
      let scratch = NSTemporaryDirectory() + "fc-authority-key-\(UUID().uuidString)"
      try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
      defer { try? FileManager.default.removeItem(atPath: scratch) }
      let identity = scratch + "/identity.der"
      try Data(base64Encoded: certificate.identityKey)!.write(
        to: URL(fileURLWithPath: identity))
      guard try RSAKeyDigest.sha1(ofDERFile: identity) == certificate.fingerprint else {
        return .unusable("\(certificatePath): its identity key does not hash to its fingerprint")
      }
      guard
        try RSAKeyDigest.publicPEMBody(ofKeyFile: entry + "/authority_signing_key")
          == certificate.signingKey
      else {
        return .unusable("\(entry)/authority_signing_key is not the key the certificate names")
      }
      fingerprint = try RSAKeyDigest.sha1(ofKeyFile: entry + "/secret_id_key", scratch: scratch)
    } catch {
      return .unusable("\(entry): \(error)")
    }
    for file in Self.files {
      let path = keysDirectory + "/" + file
      try? FileManager.default.removeItem(atPath: path)
      try contents[file]!.write(to: URL(fileURLWithPath: path))
      chmod(path, 0o600)
    }
    return .reused(v3Identity: certificate.fingerprint, fingerprint: fingerprint)
  }

  /// Keeps the keys in `keysDirectory` as `node`'s entry: written to a directory of its own,
  /// then renamed into place, so a run reading the cache meanwhile sees a whole entry or none.
  public func store(_ node: TestnetNode, from keysDirectory: String) throws {
    let files = FileManager.default
    try files.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let entry = entry(for: node)
    let staging = directory + "/.staging-\(getpid())-\(UUID().uuidString.prefix(8))"
    try files.createDirectory(atPath: staging, withIntermediateDirectories: true)
    defer { try? files.removeItem(atPath: staging) }
    chmod(staging, 0o700)
    for file in Self.files {
      try files.copyItem(atPath: keysDirectory + "/" + file, toPath: staging + "/" + file)
      chmod(staging + "/" + file, 0o600)
    }
    // An unusable entry goes first; if another run stores its own meanwhile, that one stays.
    try? files.removeItem(atPath: entry)
    if rename(staging, entry) != 0, errno != ENOTEMPTY, errno != EEXIST {
      throw TestnetError.toolFailed(
        command: "rename \(staging) \(entry)", status: errno,
        output: String(cString: strerror(errno)))
    }
  }
}

/// The digests of RSA keys as tor computes them (the SHA-1 of the DER RSAPublicKey), through
/// `openssl`.
enum RSAKeyDigest {
  /// SHA-1 of a DER file, upper-case hex.
  static func sha1(ofDERFile path: String) throws -> String {
    let digest = try ToolRunner.run(["openssl", "dgst", "-sha1", "-r", path])
    guard let hex = digest.split(separator: " ").first, hex.count == 40,
      hex.allSatisfy(\.isHexDigit)
    else {
      throw TestnetError.toolFailed(
        command: "openssl dgst -sha1 -r \(path)", status: 0,
        output: "not a SHA-1 digest: \(digest)")
    }
    return hex.uppercased()
  }

  /// The fingerprint of a private RSA key file (PEM): the SHA-1 of its DER RSAPublicKey.
  static func sha1(ofKeyFile key: String, scratch: String) throws -> String {
    let publicKey = scratch + "/\(UUID().uuidString).der"
    defer { try? FileManager.default.removeItem(atPath: publicKey) }
    try ToolRunner.run([
      "openssl", "rsa", "-in", key, "-RSAPublicKey_out", "-outform", "DER", "-out", publicKey,
    ])
    return try sha1(ofDERFile: publicKey)
  }

  /// The base64 body of a private RSA key file's public half as an RSA PUBLIC KEY block.
  static func publicPEMBody(ofKeyFile key: String) throws -> String {
    let pem = try ToolRunner.run(["openssl", "rsa", "-in", key, "-RSAPublicKey_out"])
    return pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
  }
}
