import COpenSSL
import FailClosedSupport
import Foundation

/// A certificate authority made at run time for the sandbox's world: an EC P-256 root whose PEM
/// other programs can trust (`curl --cacert`), issuing leaf certificates with DNS and IP
/// subjectAltNames, cached per name list so a server can answer any SNI name cheaply.
public final class TestCertificateAuthority: @unchecked Sendable {
  /// The root certificate, PEM encoded: give it to clients as their only trust anchor.
  public let rootCertificatePEM: String
  public let commonName: String

  private let rootKey: OpaquePointer
  private let rootCertificate: OpaquePointer
  private let lock = NSLock()
  private var issued: [String: IssuedCertificate] = [:]

  /// Makes a fresh root key and self-signed root certificate, valid from an hour ago (clock
  /// skew between namespaces is nil, but other hosts' clocks may differ) for `validDays`.
  public init(commonName: String = "failclosed test CA", validDays: Int = 7) throws {
    self.commonName = commonName
    rootKey = try CertificateBuilder.generateKey()
    do {
      rootCertificate = try CertificateBuilder.makeCertificate(
        subjectName: commonName, subjectKey: rootKey, issuer: nil, issuerKey: rootKey,
        validDays: validDays,
        extensions: [
          (NID_basic_constraints, "critical,CA:TRUE"),
          (NID_key_usage, "critical,keyCertSign,cRLSign"),
          (NID_subject_key_identifier, "hash"),
        ])
    } catch {
      EVP_PKEY_free(rootKey)
      throw error
    }
    rootCertificatePEM = try CertificateBuilder.pem(certificate: rootCertificate)
  }

  /// Loads an authority exported with ``rootCertificatePEM`` and ``rootKeyPEM``, so a second
  /// process (the world's servers) can issue certificates that clients of the first trust.
  public init(rootCertificatePEM: String, rootKeyPEM: String) throws {
    let certificates = try CertificateBuilder.certificates(fromPEM: rootCertificatePEM)
    rootCertificate = certificates[0]
    for extra in certificates.dropFirst() { X509_free(extra) }
    do {
      rootKey = try CertificateBuilder.privateKey(fromPEM: rootKeyPEM)
    } catch {
      X509_free(rootCertificate)
      throw error
    }
    self.rootCertificatePEM = rootCertificatePEM
    commonName = CertificateBuilder.commonName(of: rootCertificate) ?? "imported CA"
    // From here on a throw runs deinit, which frees both.
    guard X509_check_private_key(rootCertificate, rootKey) == 1 else {
      throw TLSError.invalidPEM(what: "the root key does not match the root certificate")
    }
  }

  deinit {
    X509_free(rootCertificate)
    EVP_PKEY_free(rootKey)
  }

  /// The root's private key (PKCS#8 PEM). Only for handing the authority to another process of
  /// the same run; never write it where the system under test can read it.
  public var rootKeyPEM: String {
    get throws { try CertificateBuilder.pem(privateKey: rootKey) }
  }

  /// Writes the root certificate to `path` (for `curl --cacert`, `SSL_CERT_FILE`, tor clients).
  public func writeRootCertificate(to path: String) throws {
    try Data(rootCertificatePEM.utf8).write(to: URL(fileURLWithPath: path))
  }

  /// A leaf certificate for `names` (DNS names, wildcards such as `*.example`, or IP literals),
  /// signed by the root, with its own P-256 key. The first name is also the common name.
  /// Repeated calls with the same names return the cached pair.
  public func issue(for names: [String]) throws -> (certificatePEM: String, keyPEM: String) {
    let credential = try credential(for: names)
    return (credential.certificatePEM, credential.keyPEM)
  }

  /// Number of distinct name lists issued so far (the cache size).
  public var issuedCount: Int { lock.withLock { issued.count } }

  func credential(for names: [String]) throws -> IssuedCertificate {
    let normalized = names.map { $0.lowercased() }
    guard !normalized.isEmpty else {
      throw TLSError.invalidArgument("a certificate needs at least one name")
    }
    for name in normalized where !Self.isValidName(name) {
      throw TLSError.invalidArgument("certificate name \"\(name)\" is not a DNS name or IP")
    }
    let key = normalized.joined(separator: ",")
    lock.lock()
    defer { lock.unlock() }
    if let cached = issued[key] { return cached }
    let made = try makeLeaf(for: normalized)
    issued[key] = made
    return made
  }

  private func makeLeaf(for names: [String]) throws -> IssuedCertificate {
    let key = try CertificateBuilder.generateKey()
    let altNames = names.map { SocketAddress.parseIP($0) == nil ? "DNS:\($0)" : "IP:\($0)" }
    let certificate: OpaquePointer
    do {
      certificate = try CertificateBuilder.makeCertificate(
        subjectName: names[0], subjectKey: key, issuer: rootCertificate, issuerKey: rootKey,
        validDays: 7,
        extensions: [
          (NID_basic_constraints, "critical,CA:FALSE"),
          (NID_key_usage, "critical,digitalSignature"),
          (NID_ext_key_usage, "serverAuth"),
          (NID_subject_alt_name, altNames.joined(separator: ",")),
          (NID_authority_key_identifier, "keyid:always"),
        ])
    } catch {
      EVP_PKEY_free(key)
      throw error
    }
    return try IssuedCertificate(certificate: certificate, key: key)
  }

  /// DNS names (letters, digits, '-', '_', '.', a leading "*." wildcard) or IP literals; the
  /// check also keeps commas out of OpenSSL's subjectAltName configuration string.
  static func isValidName(_ name: String) -> Bool {
    if SocketAddress.parseIP(name) != nil { return true }
    guard !name.isEmpty, name.utf8.count <= 253 else { return false }
    let body = name.hasPrefix("*.") ? String(name.dropFirst(2)) : name
    return !body.isEmpty
      && body.utf8.allSatisfy { byte in
        (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2D
          || byte == 0x2E || byte == 0x5F
      }
  }
}

/// A leaf certificate and its key, kept as OpenSSL objects for servers and as PEM for export.
final class IssuedCertificate: @unchecked Sendable {
  let certificate: OpaquePointer
  let key: OpaquePointer
  let certificatePEM: String
  let keyPEM: String

  init(certificate: OpaquePointer, key: OpaquePointer) throws {
    self.certificate = certificate
    self.key = key
    do {
      certificatePEM = try CertificateBuilder.pem(certificate: certificate)
      keyPEM = try CertificateBuilder.pem(privateKey: key)
    } catch {
      X509_free(certificate)
      EVP_PKEY_free(key)
      throw error
    }
  }

  deinit {
    X509_free(certificate)
    EVP_PKEY_free(key)
  }
}
