/// One complete reply or async event as a controller reads it: every line up to the one with a
/// space after the code.
public struct ControlMessage: Hashable, Sendable {
  public struct Line: Hashable, Sendable {
    public let code: Int
    /// "-", "+" or " ".
    public let separator: Character
    public let text: String
    /// The unstuffed data block after a "+" line (lines joined by LF).
    public let data: String?
  }

  public let lines: [Line]

  /// The code of the final line (what decides success: 2xx, or 650 for events).
  public var code: Int { lines.last?.code ?? 0 }
  public var isAsyncEvent: Bool { code == 650 }
  public var isSuccess: Bool { (200..<300).contains(code) }

  /// `key=value` pairs of all lines, data blocks as values (`250-version=0.4.9.11`,
  /// `250+orconn-status=` + block).
  public var keyValues: [(key: String, value: String)] {
    lines.compactMap { line in
      guard let equals = line.text.firstIndex(of: "=") else { return nil }
      let key = String(line.text[..<equals])
      return (key, line.data ?? String(line.text[line.text.index(after: equals)...]))
    }
  }

  public func value(for key: String) -> String? {
    keyValues.first { $0.key == key }?.value
  }
}

/// A reply the client could not read; `offset` counts bytes from the start of the stream.
public struct ControlReplyError: Error, Hashable, Sendable, CustomStringConvertible {
  public let offset: Int
  public let reason: String
  public var description: String { "control reply at byte \(offset): \(reason)" }
}

/// The client side: reads replies and 650 events from a control port's byte stream, in the
/// order they arrive (events may come between a command and its reply). Lines end in CRLF
/// (a bare LF is tolerated), codes are three digits, a line is capped in length, and so is a
/// whole message: a peer that never ends a `250+` block or keeps sending `250-` lines would
/// otherwise grow the parser without bound.
public struct ControlReplyParser: Sendable {
  public static let defaultMaximumLineBytes = 1024 * 1024
  /// Well above the largest reply a controller asks for (a full public consensus through
  /// `GETINFO ns/all` is a few MiB).
  public static let defaultMaximumMessageBytes = 32 * 1024 * 1024

  public let maximumLineBytes: Int
  public let maximumMessageBytes: Int
  private var buffer: [UInt8] = []
  private var consumedBefore = 0
  private var lines: [ControlMessage.Line] = []
  private var dataHeader: (code: Int, text: String)?
  private var dataLines: [String] = []
  /// Bytes of the message being read so far, and where it started.
  private var messageBytes = 0
  private var messageStart = 0

  public init(
    maximumLineBytes: Int = ControlReplyParser.defaultMaximumLineBytes,
    maximumMessageBytes: Int = ControlReplyParser.defaultMaximumMessageBytes
  ) {
    self.maximumLineBytes = maximumLineBytes
    self.maximumMessageBytes = maximumMessageBytes
  }

  public mutating func append(_ bytes: some Sequence<UInt8>) {
    buffer.append(contentsOf: bytes)
  }

  /// The next complete message, or nil when more bytes are needed.
  public mutating func next() throws(ControlReplyError) -> ControlMessage? {
    var offset = 0
    defer {
      buffer.removeFirst(offset)
      consumedBefore += offset
    }
    while let newline = buffer[offset...].firstIndex(of: UInt8(ascii: "\n")) {
      var end = newline
      if end > offset, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
      let line = String(decoding: buffer[offset..<end], as: UTF8.self)
      let lineOffset = consumedBefore + offset
      if messageBytes == 0 { messageStart = lineOffset }
      messageBytes += newline + 1 - offset
      offset = newline + 1
      if messageBytes > maximumMessageBytes {
        throw ControlReplyError(
          offset: messageStart, reason: "message longer than \(maximumMessageBytes) bytes")
      }
      if let header = dataHeader {
        if line == "." {
          lines.append(
            .init(
              code: header.code, separator: "+", text: header.text,
              data: dataLines.joined(separator: "\n")))
          dataHeader = nil
          dataLines = []
        } else {
          dataLines.append(line.hasPrefix(".") ? String(line.dropFirst()) : line)
        }
        continue
      }
      let bytes = Array(line.utf8)
      guard bytes.count >= 4, bytes[0..<3].allSatisfy({ (0x30...0x39).contains($0) }),
        let code = Int(String(decoding: bytes[0..<3], as: UTF8.self))
      else {
        throw ControlReplyError(
          offset: lineOffset, reason: "expected a 3-digit code and a separator, got \"\(line)\"")
      }
      let text = String(decoding: bytes[4...], as: UTF8.self)
      switch bytes[3] {
      case UInt8(ascii: "-"):
        lines.append(.init(code: code, separator: "-", text: text, data: nil))
      case UInt8(ascii: "+"):
        dataHeader = (code, text)
      case UInt8(ascii: " "):
        lines.append(.init(code: code, separator: " ", text: text, data: nil))
        let message = ControlMessage(lines: lines)
        lines = []
        messageBytes = 0
        return message
      default:
        throw ControlReplyError(
          offset: lineOffset + 3, reason: "unknown separator after code \(code) in \"\(line)\"")
      }
    }
    if buffer.count - offset > maximumLineBytes {
      throw ControlReplyError(
        offset: consumedBefore + offset, reason: "line longer than \(maximumLineBytes) bytes")
    }
    return nil
  }
}
