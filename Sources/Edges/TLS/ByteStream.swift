import FailClosedSupport

/// A connected, ordered byte stream: a plain ``Socket`` or a ``TLSConnection``. HTTP and
/// WebSocket edges run over either, so the system under test can layer SOCKS, then TLS, then
/// HTTP on one socket. Calls block: use them on dedicated threads (``BlockingIO``).
public protocol ByteStream: AnyObject, Sendable {
  /// Reads up to `max` bytes; an empty array means the peer closed the stream.
  func read(max: Int) throws -> [UInt8]
  /// Writes every byte or throws.
  func write(_ bytes: [UInt8]) throws
  /// Closes the stream; idempotent.
  func close()
}

extension Socket: ByteStream {}
