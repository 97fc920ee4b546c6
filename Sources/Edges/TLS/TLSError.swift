import COpenSSL
import Foundation

/// A TLS failure, worded so the log names what went wrong: the verification failure as OpenSSL
/// reports it (X509_verify_cert_error_string), or the OpenSSL call and its error queue.
public enum TLSError: Error, CustomStringConvertible, Equatable, Sendable {
  /// The peer's certificate chain or name did not verify, e.g. "hostname mismatch" or
  /// "unable to get local issuer certificate".
  case verificationFailed(serverName: String, code: Int32, reason: String)
  /// The handshake failed for another reason (protocol version, alert, peer closed).
  case handshakeFailed(peer: String, detail: String)
  /// An OpenSSL call failed outside a handshake (context setup, key generation, I/O).
  case openSSL(call: String, detail: String)
  /// Bytes given as PEM could not be read.
  case invalidPEM(what: String)
  /// A deadline passed while waiting for the peer.
  case timedOut(operation: String, seconds: Double)
  /// The connection is closed (locally, or the peer reset it).
  case connectionClosed(operation: String)
  /// An argument was rejected before any OpenSSL call.
  case invalidArgument(String)

  public var description: String {
    switch self {
    case .verificationFailed(let name, let code, let reason):
      return "TLS certificate verification failed for \(name): \(reason) (X509 error \(code))"
    case .handshakeFailed(let peer, let detail):
      return "TLS handshake with \(peer) failed: \(detail)"
    case .openSSL(let call, let detail):
      return "\(call) failed: \(detail)"
    case .invalidPEM(let what):
      return "invalid PEM: \(what)"
    case .timedOut(let operation, let seconds):
      return "TLS \(operation) timed out after \(seconds) s"
    case .connectionClosed(let operation):
      return "TLS \(operation): connection closed"
    case .invalidArgument(let text):
      return "TLS: \(text)"
    }
  }

  /// Drains OpenSSL's thread-local error queue into one line ("error:0A000086:SSL routines::...").
  static func drainErrorQueue() -> String {
    var lines: [String] = []
    while true {
      let code = ERR_get_error()
      if code == 0 { break }
      var buffer = [CChar](repeating: 0, count: 256)
      ERR_error_string_n(code, &buffer, buffer.count)
      lines.append(
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    return lines.isEmpty ? "no OpenSSL error recorded" : lines.joined(separator: "; ")
  }

  static func openSSLFailure(_ call: String) -> TLSError {
    .openSSL(call: call, detail: drainErrorQueue())
  }
}
