import COpenSSL
import FailClosedSupport
import Foundation

/// An established TLS session over a connected socket, client or server side.
///
/// The socket is switched to non-blocking mode: every OpenSSL call runs under a lock and returns
/// at once, and waiting for the peer happens in poll with the lock released. So one thread may
/// block in ``read(max:)`` while another calls ``write(_:)`` (a WebSocket reader and its
/// senders), and ``close()`` from any thread wakes both. Calls block: use dedicated threads.
public final class TLSConnection: ByteStream, @unchecked Sendable {
  /// The connected socket underneath (for its addresses; do not read or write it directly).
  public let socket: Socket
  /// The SNI name: the one sent (client) or the one received, if any (server).
  public private(set) var serverName: String?
  /// The negotiated protocol, e.g. "TLSv1.3".
  public private(set) var protocolVersion = ""
  /// The negotiated cipher suite, e.g. "TLS_AES_256_GCM_SHA384".
  public private(set) var cipher = ""

  private let ssl: OpaquePointer
  private let fd: Int32
  private let lock = NSLock()
  private var closed = false
  private var timeout: Double?

  /// Takes ownership of `ssl` only when it returns; on a throw the caller still owns it.
  init(socket: Socket, ssl: OpaquePointer, serverName: String?) throws {
    try socket.setNonBlocking(true)
    guard SSL_set_fd(ssl, socket.fd) == 1 else { throw TLSError.openSSLFailure("SSL_set_fd") }
    self.socket = socket
    self.ssl = ssl
    self.serverName = serverName
    fd = socket.fd
  }

  deinit {
    close()
    SSL_free(ssl)
  }

  /// Bounds every later read and write by `seconds` of waiting for the peer (nil: no bound).
  public func setTimeout(_ seconds: Double?) {
    lock.withLock { timeout = seconds }
  }

  func handshake(asServer: Bool, timeout: Double, peer: String) throws {
    do {
      _ = try drive("handshake", timeout: timeout) {
        asServer ? SSL_accept($0) : SSL_connect($0)
      }
    } catch let error as TLSError {
      if case .timedOut = error { throw error }
      if !asServer {
        let result = Int32(SSL_get_verify_result(ssl))
        if result != fc_X509_V_OK() {
          throw TLSError.verificationFailed(
            serverName: peer, code: result,
            reason: String(cString: X509_verify_cert_error_string(Int(result))))
        }
      }
      if case .connectionClosed = error {
        throw TLSError.handshakeFailed(peer: peer, detail: "peer closed the connection")
      }
      if case .openSSL(_, let detail) = error {
        throw TLSError.handshakeFailed(peer: peer, detail: detail)
      }
      throw error
    }
    if asServer {
      serverName = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name).map { String(cString: $0) }
    }
    protocolVersion = String(cString: SSL_get_version(ssl))
    cipher = SSL_get_current_cipher(ssl).map { String(cString: SSL_CIPHER_get_name($0)) } ?? ""
  }

  public func read(max: Int = 65536) throws -> [UInt8] {
    precondition(max > 0, "read(max:) needs a positive size")
    var buffer = [UInt8](repeating: 0, count: max)
    let count: Int32
    do {
      count = try buffer.withUnsafeMutableBytes { raw in
        try drive("read", timeout: currentTimeout) {
          SSL_read($0, raw.baseAddress, Int32(Swift.min(raw.count, Int(Int32.max))))
        }
      }
    } catch TLSError.connectionClosed {
      return []
    }
    return Array(buffer.prefix(Int(count)))
  }

  public func write(_ bytes: [UInt8]) throws {
    var offset = 0
    while offset < bytes.count {
      let chunk = Swift.min(bytes.count - offset, 1 << 20)
      let written = try bytes.withUnsafeBytes { raw in
        try drive("write", timeout: currentTimeout) {
          SSL_write($0, raw.baseAddress! + offset, Int32(chunk))
        }
      }
      if written <= 0 { throw TLSError.connectionClosed(operation: "write") }
      offset += Int(written)
    }
  }

  /// Sends close_notify (best effort, without waiting) and closes the socket; idempotent.
  public func close() {
    let wasOpen: Bool = lock.withLock {
      guard !closed else { return false }
      closed = true
      ERR_clear_error()
      _ = SSL_shutdown(ssl)
      ERR_clear_error()
      return true
    }
    if wasOpen {
      _ = Glibc.shutdown(fd, Int32(SHUT_RDWR))  // wakes threads waiting in poll
      socket.close()
    }
  }

  private var currentTimeout: Double? { lock.withLock { timeout } }

  /// Runs one SSL call until it completes. Returns its positive result, or 0 when the peer
  /// closed (close_notify or EOF). Throws ``TLSError/connectionClosed(operation:)`` when closed
  /// locally, ``TLSError/timedOut(operation:seconds:)`` past the deadline.
  private func drive(_ operation: String, timeout: Double?, _ call: (OpaquePointer) -> Int32)
    throws -> Int32
  {
    let deadline = timeout.map { Self.monotonicSeconds() + $0 }
    while true {
      lock.lock()
      if closed {
        lock.unlock()
        throw TLSError.connectionClosed(operation: operation)
      }
      ERR_clear_error()
      let result = call(ssl)
      let sslError = result > 0 ? SSL_ERROR_NONE : SSL_get_error(ssl, result)
      let systemErrno = errno
      let queue =
        sslError == SSL_ERROR_SSL || sslError == SSL_ERROR_SYSCALL
        ? TLSError.drainErrorQueue() : ""
      lock.unlock()
      switch sslError {
      case SSL_ERROR_NONE:
        return result
      case SSL_ERROR_WANT_READ:
        try wait(for: Int16(POLLIN), operation: operation, deadline: deadline, timeout: timeout)
      case SSL_ERROR_WANT_WRITE:
        try wait(for: Int16(POLLOUT), operation: operation, deadline: deadline, timeout: timeout)
      case SSL_ERROR_ZERO_RETURN:
        if operation == "handshake" { throw TLSError.connectionClosed(operation: operation) }
        return 0
      case SSL_ERROR_SYSCALL:
        if systemErrno == 0 || systemErrno == ECONNRESET || systemErrno == EPIPE {
          if operation == "read" { return 0 }
          throw TLSError.connectionClosed(operation: operation)
        }
        throw TLSError.openSSL(
          call: "SSL \(operation)", detail: SystemError("socket", code: systemErrno).description)
      default:
        throw TLSError.openSSL(call: "SSL \(operation)", detail: queue)
      }
    }
  }

  private func wait(for events: Int16, operation: String, deadline: Double?, timeout: Double?)
    throws
  {
    while true {
      var milliseconds: Int32 = -1
      if let deadline {
        let left = deadline - Self.monotonicSeconds()
        if left <= 0 { throw TLSError.timedOut(operation: operation, seconds: timeout ?? 0) }
        milliseconds = Int32(Swift.min(left * 1000 + 1, Double(Int32.max)))
      }
      var pfd = pollfd(fd: fd, events: events, revents: 0)
      let ready = poll(&pfd, 1, milliseconds)
      if ready > 0 { return }  // readable, writable, or hung up: let OpenSSL find out which
      if ready < 0 && errno != EINTR { throw SystemError("poll(TLS \(operation))") }
    }
  }

  static func monotonicSeconds() -> Double {
    Double(DispatchTime.now().uptimeNanoseconds) / 1e9
  }
}
