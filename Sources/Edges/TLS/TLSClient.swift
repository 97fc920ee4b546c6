import COpenSSL
import FailClosedSupport
import Foundation

/// The client side of TLS: an OpenSSL context with its trust anchors, made once and used for
/// many connections. Every connection verifies the chain and the server name (SSL_set1_host, or
/// the IP address for an IP literal), sends SNI for DNS names, and refuses anything below
/// TLS 1.2. There is deliberately no way to turn verification off.
public final class TLSClient: @unchecked Sendable {
  private let context: OpaquePointer

  public init(trust: TLSTrust) throws {
    BlockingIO.ignoreSIGPIPE()
    guard let context = SSL_CTX_new(TLS_client_method()) else {
      throw TLSError.openSSLFailure("SSL_CTX_new")
    }
    self.context = context
    // From here on a throw runs deinit, which frees the context.
    guard fc_SSL_CTX_set_min_proto_version(context, fc_TLS1_2_VERSION()) == 1 else {
      throw TLSError.openSSLFailure("SSL_CTX_set_min_proto_version")
    }
    _ = fc_SSL_CTX_set_mode(
      context, fc_SSL_MODE_AUTO_RETRY() | fc_SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER())
    // A peer that closes without close_notify reads as EOF; HTTP framing detects truncation.
    _ = fc_SSL_CTX_set_options(
      context, fc_SSL_OP_IGNORE_UNEXPECTED_EOF() | fc_SSL_OP_NO_RENEGOTIATION())
    SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
    switch trust {
    case .system:
      guard SSL_CTX_set_default_verify_paths(context) == 1 else {
        throw TLSError.openSSLFailure("SSL_CTX_set_default_verify_paths")
      }
    case .pem(let pem):
      let store = SSL_CTX_get_cert_store(context)
      for certificate in try CertificateBuilder.certificates(fromPEM: pem) {
        defer { X509_free(certificate) }
        guard X509_STORE_add_cert(store, certificate) == 1 else {
          throw TLSError.openSSLFailure("X509_STORE_add_cert")
        }
      }
    }
  }

  deinit { SSL_CTX_free(context) }

  /// Runs the handshake over `socket` (already connected, e.g. through SOCKS) and verifies
  /// that the certificate is valid for `serverName`. Throws ``TLSError/verificationFailed``
  /// naming OpenSSL's reason when it is not. Blocks: call on a dedicated thread.
  public func connect(_ socket: Socket, serverName: String, timeout: Double = 30) throws
    -> TLSConnection
  {
    guard !serverName.isEmpty, !serverName.utf8.contains(0) else {
      throw TLSError.invalidArgument("server name \"\(serverName)\" is empty or has a NUL byte")
    }
    guard let ssl = SSL_new(context) else { throw TLSError.openSSLFailure("SSL_new") }
    let isAddress = SocketAddress.parseIP(serverName) != nil
    let connection: TLSConnection
    do {
      connection = try TLSConnection(
        socket: socket, ssl: ssl, serverName: isAddress ? nil : serverName)
    } catch {
      SSL_free(ssl)
      throw error
    }
    if isAddress {
      guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), serverName) == 1 else {
        throw TLSError.openSSLFailure("X509_VERIFY_PARAM_set1_ip_asc(\(serverName))")
      }
    } else {
      guard fc_SSL_set_tlsext_host_name(ssl, serverName) == 1 else {
        throw TLSError.openSSLFailure("SSL_set_tlsext_host_name(\(serverName))")
      }
      SSL_set_hostflags(ssl, UInt32(fc_X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS()))
      guard SSL_set1_host(ssl, serverName) == 1 else {
        throw TLSError.openSSLFailure("SSL_set1_host(\(serverName))")
      }
    }
    try connection.handshake(asServer: false, timeout: timeout, peer: serverName)
    return connection
  }
}
