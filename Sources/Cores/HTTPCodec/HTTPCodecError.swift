/// Malformed or over-limit HTTP, with the byte offset (from the start of the stream the parser
/// was fed) at which the problem was found, so a log line points at the exact byte.
public struct HTTPCodecError: Error, Equatable, Sendable, CustomStringConvertible {
  public enum Reason: Equatable, Sendable {
    case headTooLarge(limit: Int)
    case tooManyHeaders(limit: Int)
    case malformedStartLine(String)
    case malformedHeader(String)
    case invalidContentLength(String)
    case unsupportedTransferEncoding(String)
    case bodyTooLarge(limit: Int)
    case malformedChunk(String)
    case truncated(String)
    /// A field given to an encoder that cannot be sent as is (CR, LF, space in a token...).
    case invalidField(name: String, detail: String)
  }

  public let reason: Reason
  /// Byte offset in the parsed stream; nil for encoder errors.
  public let offset: Int?

  public init(_ reason: Reason, offset: Int?) {
    self.reason = reason
    self.offset = offset
  }

  public var description: String {
    let place = offset.map { "HTTP at byte \($0): " } ?? "HTTP: "
    switch reason {
    case .headTooLarge(let limit): return place + "head longer than \(limit) bytes"
    case .tooManyHeaders(let limit): return place + "more than \(limit) header fields"
    case .malformedStartLine(let text): return place + "malformed start line: \(text)"
    case .malformedHeader(let text): return place + "malformed header field: \(text)"
    case .invalidContentLength(let text): return place + "invalid Content-Length: \(text)"
    case .unsupportedTransferEncoding(let text):
      return place + "unsupported Transfer-Encoding: \(text)"
    case .bodyTooLarge(let limit): return place + "body longer than \(limit) bytes"
    case .malformedChunk(let text): return place + "malformed chunk: \(text)"
    case .truncated(let text): return place + "connection closed \(text)"
    case .invalidField(let name, let detail): return place + "cannot encode \(name): \(detail)"
    }
  }
}

/// Bounds that keep a hostile or broken peer from making a parser hold unbounded memory.
public struct HTTPLimits: Sendable, Equatable {
  /// Start line plus header fields plus the blank line.
  public var maxHeadBytes: Int
  public var maxHeaderCount: Int
  public var maxBodyBytes: Int
  /// A chunk-size line with its extensions, or one trailer field.
  public var maxChunkLineBytes: Int

  public init(
    maxHeadBytes: Int = 16384, maxHeaderCount: Int = 100, maxBodyBytes: Int = 8 << 20,
    maxChunkLineBytes: Int = 1024
  ) {
    self.maxHeadBytes = maxHeadBytes
    self.maxHeaderCount = maxHeaderCount
    self.maxBodyBytes = maxBodyBytes
    self.maxChunkLineBytes = maxChunkLineBytes
  }
}
