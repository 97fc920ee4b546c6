import COpenSSL
import FailClosedSupport
import Foundation

/// The server side of TLS for the sandbox's world: one context that answers any name, picking
/// (and, the first time, issuing) a certificate from the ``TestCertificateAuthority`` for the
/// SNI name the client sent, or for `defaultName` when it sent none. With `presenting` set it
/// always serves the certificate for those names instead (a wrong-certificate fault).
public final class TLSServer: @unchecked Sendable {
  public let authority: TestCertificateAuthority
  public let defaultName: String
  public let presenting: [String]?

  private let context: OpaquePointer
  private let lock = NSLock()
  private var failures: [String] = []

  public init(
    authority: TestCertificateAuthority, defaultName: String = "localhost",
    presenting: [String]? = nil
  ) throws {
    BlockingIO.ignoreSIGPIPE()
    self.authority = authority
    self.defaultName = defaultName
    self.presenting = presenting
    guard let context = SSL_CTX_new(TLS_server_method()) else {
      throw TLSError.openSSLFailure("SSL_CTX_new")
    }
    self.context = context
    // From here on a throw runs deinit, which frees the context.
    guard fc_SSL_CTX_set_min_proto_version(context, fc_TLS1_2_VERSION()) == 1 else {
      throw TLSError.openSSLFailure("SSL_CTX_set_min_proto_version")
    }
    _ = fc_SSL_CTX_set_mode(
      context, fc_SSL_MODE_AUTO_RETRY() | fc_SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER())
    _ = fc_SSL_CTX_set_options(
      context, fc_SSL_OP_IGNORE_UNEXPECTED_EOF() | fc_SSL_OP_NO_RENEGOTIATION())
    _ = try authority.credential(for: presenting ?? [defaultName])  // fail now on a bad name
    // The certificate callback runs after the ClientHello is parsed, so SNI is known; the
    // context never outlives self (deinit frees it), so an unretained pointer is safe.
    SSL_CTX_set_cert_cb(
      context,
      { ssl, argument in
        guard let ssl, let argument else { return 0 }
        let server = Unmanaged<TLSServer>.fromOpaque(argument).takeUnretainedValue()
        return server.installCertificate(on: ssl) ? 1 : 0
      }, Unmanaged.passUnretained(self).toOpaque())
  }

  deinit { SSL_CTX_free(context) }

  /// Why recent handshakes could not get a certificate (an SNI name that is not a DNS name).
  public var certificateFailures: [String] { lock.withLock { failures } }

  /// Runs the server handshake over an accepted socket. Blocks: call on a dedicated thread.
  public func accept(_ socket: Socket, timeout: Double = 30) throws -> TLSConnection {
    guard let ssl = SSL_new(context) else { throw TLSError.openSSLFailure("SSL_new") }
    let peer = socket.remoteAddress.map { "client \($0)" } ?? "client"
    let connection: TLSConnection
    do {
      connection = try TLSConnection(socket: socket, ssl: ssl, serverName: nil)
    } catch {
      SSL_free(ssl)
      throw error
    }
    try connection.handshake(asServer: true, timeout: timeout, peer: peer)
    return connection
  }

  static func serverName(of ssl: OpaquePointer) -> String? {
    SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name).map { String(cString: $0) }
  }

  private func installCertificate(on ssl: OpaquePointer) -> Bool {
    let names = presenting ?? [Self.serverName(of: ssl) ?? defaultName]
    do {
      let credential = try authority.credential(for: names)
      return SSL_use_certificate(ssl, credential.certificate) == 1
        && SSL_use_PrivateKey(ssl, credential.key) == 1
    } catch {
      lock.withLock {
        failures.append("certificate for \(names): \(error)")
        if failures.count > 100 { failures.removeFirst() }
      }
      return false
    }
  }
}
