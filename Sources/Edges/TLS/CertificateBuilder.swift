import COpenSSL
import Foundation

/// The OpenSSL calls that make keys and X.509 certificates, in one place.
enum CertificateBuilder {
  static func generateKey() throws -> OpaquePointer {
    guard let key = fc_EVP_EC_gen("P-256") else { throw TLSError.openSSLFailure("EVP_EC_gen") }
    return key
  }

  /// Builds and signs a v3 certificate; `issuer` nil makes it self-signed.
  static func makeCertificate(
    subjectName: String, subjectKey: OpaquePointer, issuer: OpaquePointer?,
    issuerKey: OpaquePointer, validDays: Int, extensions: [(Int32, String)]
  ) throws -> OpaquePointer {
    guard let certificate = X509_new() else { throw TLSError.openSSLFailure("X509_new") }
    do {
      try build(
        certificate, subjectName: subjectName, subjectKey: subjectKey, issuer: issuer,
        issuerKey: issuerKey, validDays: validDays, extensions: extensions)
    } catch {
      X509_free(certificate)
      throw error
    }
    return certificate
  }

  private static func build(
    _ certificate: OpaquePointer, subjectName: String, subjectKey: OpaquePointer,
    issuer: OpaquePointer?, issuerKey: OpaquePointer, validDays: Int,
    extensions: [(Int32, String)]
  ) throws {
    func check(_ ok: Bool, _ call: String) throws {
      if !ok { throw TLSError.openSSLFailure(call) }
    }
    try check(X509_set_version(certificate, 2) == 1, "X509_set_version")
    var serial: UInt64 = 0
    try withUnsafeMutableBytes(of: &serial) {
      try check(RAND_bytes($0.baseAddress!.assumingMemoryBound(to: UInt8.self), 8) == 1, "RAND")
    }
    serial &= 0x7FFF_FFFF_FFFF_FFFF  // positive, as RFC 5280 requires
    try check(
      ASN1_INTEGER_set_uint64(X509_get_serialNumber(certificate), serial) == 1,
      "ASN1_INTEGER_set_uint64")
    try check(X509_gmtime_adj(X509_getm_notBefore(certificate), -3600) != nil, "notBefore")
    try check(
      X509_gmtime_adj(X509_getm_notAfter(certificate), validDays * 86400) != nil, "notAfter")
    try check(X509_set_pubkey(certificate, subjectKey) == 1, "X509_set_pubkey")

    guard let name = X509_NAME_new() else { throw TLSError.openSSLFailure("X509_NAME_new") }
    defer { X509_NAME_free(name) }
    try check(
      X509_NAME_add_entry_by_txt(name, "CN", fc_MBSTRING_ASC(), subjectName, -1, -1, 0) == 1,
      "X509_NAME_add_entry_by_txt(CN=\(subjectName))")
    try check(X509_set_subject_name(certificate, name) == 1, "X509_set_subject_name")
    let issuerName = issuer.map { X509_get_subject_name($0) } ?? name
    try check(X509_set_issuer_name(certificate, issuerName) == 1, "X509_set_issuer_name")

    for (nid, value) in extensions {
      var context = X509V3_CTX()
      fc_X509V3_set_ctx_nodb(&context)
      X509V3_set_ctx(&context, issuer ?? certificate, certificate, nil, nil, 0)
      guard let ext = X509V3_EXT_conf_nid(nil, &context, nid, value) else {
        throw TLSError.openSSLFailure("X509V3_EXT_conf_nid(\(value))")
      }
      defer { X509_EXTENSION_free(ext) }
      try check(X509_add_ext(certificate, ext, -1) == 1, "X509_add_ext(\(value))")
    }
    try check(X509_sign(certificate, issuerKey, EVP_sha256()) > 0, "X509_sign")
  }

  static func pem(certificate: OpaquePointer) throws -> String {
    try withMemoryBIO("PEM_write_bio_X509") { PEM_write_bio_X509($0, certificate) }
  }

  static func pem(privateKey: OpaquePointer) throws -> String {
    try withMemoryBIO("PEM_write_bio_PrivateKey") {
      PEM_write_bio_PrivateKey($0, privateKey, nil, nil, 0, nil, nil)
    }
  }

  private static func withMemoryBIO(_ call: String, _ write: (OpaquePointer) -> Int32) throws
    -> String
  {
    guard let bio = BIO_new(BIO_s_mem()) else { throw TLSError.openSSLFailure("BIO_new") }
    defer { BIO_free(bio) }
    guard write(bio) == 1 else { throw TLSError.openSSLFailure(call) }
    var data: UnsafeMutablePointer<CChar>?
    let length = fc_BIO_get_mem_data(bio, &data)
    guard let data, length > 0 else { throw TLSError.openSSLFailure(call) }
    return String(
      decoding: UnsafeRawBufferPointer(start: data, count: Int(length)), as: UTF8.self)
  }

  /// Reads every certificate in a PEM text (a bundle may hold several).
  static func certificates(fromPEM pem: String) throws -> [OpaquePointer] {
    let bytes = Array(pem.utf8)
    // The memory BIO borrows the buffer, so all reading happens inside this closure.
    let certificates: [OpaquePointer] = try bytes.withUnsafeBytes { raw in
      guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else {
        throw TLSError.openSSLFailure("BIO_new_mem_buf")
      }
      defer { BIO_free(bio) }
      var found: [OpaquePointer] = []
      while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
        found.append(certificate)
      }
      return found
    }
    ERR_clear_error()  // the loop ends on "no start line", which is not a failure
    guard !certificates.isEmpty else {
      throw TLSError.invalidPEM(what: "no CERTIFICATE block in \(bytes.count) bytes")
    }
    return certificates
  }

  static func privateKey(fromPEM pem: String) throws -> OpaquePointer {
    let bytes = Array(pem.utf8)
    let key: OpaquePointer? = try bytes.withUnsafeBytes { raw in
      guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else {
        throw TLSError.openSSLFailure("BIO_new_mem_buf")
      }
      defer { BIO_free(bio) }
      return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
    }
    guard let key else {
      throw TLSError.invalidPEM(what: "no private key: \(TLSError.drainErrorQueue())")
    }
    return key
  }

  static func commonName(of certificate: OpaquePointer) -> String? {
    var buffer = [CChar](repeating: 0, count: 256)
    let length = X509_NAME_get_text_by_NID(
      X509_get_subject_name(certificate), NID_commonName, &buffer, Int32(buffer.count))
    guard length > 0 else { return nil }
    return String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}
