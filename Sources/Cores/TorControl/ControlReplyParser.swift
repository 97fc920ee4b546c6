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
/// (a bare LF is tolerated) and codes are three digits. What a hostile port could make it hold
/// is capped: a line's length (whether its end has come or not), a whole message's bytes (a
/// `250+` block with no "." line, endless `250-` lines) and its reply lines (each one an
/// object of its own, so a flood of tiny lines would cost far more than its bytes). Past a cap,
/// `next()` throws an error naming what was too long, as for any malformed reply.
public struct ControlReplyParser: Sendable {
  /// Far above any line tor writes (a long one is a 650 CIRC event with its path, about a
  /// kilobyte): bulk comes in data blocks, line by line.
  public static let defaultMaximumLineBytes = 1024 * 1024
  /// Well above the largest reply a controller asks for (a full public consensus through
  /// `GETINFO ns/all` is a few MiB; a testnet's, a few KiB).
  public static let defaultMaximumMessageBytes = 32 * 1024 * 1024
  /// Reply lines of one message (data-block lines are bytes, not counted here): tor writes
  /// one per key asked for, a few hundred for a GETCONF of every option.
  public static let defaultMaximumMessageLines = 64 * 1024

  public let maximumLineBytes: Int
  public let maximumMessageBytes: Int
  public let maximumMessageLines: Int
  private var buffer: [UInt8] = []
  private var consumedBefore = 0
  private var lines: [ControlMessage.Line] = []
  private var dataHeader: (code: Int, text: String)?
  /// The block being read, unstuffed, its lines joined by LF: bytes, so a block of tiny lines
  /// holds no more than it was sent.
  private var dataBytes: [UInt8] = []
  private var dataLineCount = 0
  /// Bytes of the message being read so far, and where it started.
  private var messageBytes = 0
  private var messageStart = 0

  public init(
    maximumLineBytes: Int = ControlReplyParser.defaultMaximumLineBytes,
    maximumMessageBytes: Int = ControlReplyParser.defaultMaximumMessageBytes,
    maximumMessageLines: Int = ControlReplyParser.defaultMaximumMessageLines
  ) {
    self.maximumLineBytes = maximumLineBytes
    self.maximumMessageBytes = maximumMessageBytes
    self.maximumMessageLines = maximumMessageLines
  }

  /// What the parser holds: bytes not read yet, and those of the message read so far (its
  /// lines and data block hold no more than that). Never above a cap and what was appended
  /// since `next()` last ran.
  public var bufferedByteCount: Int { buffer.count + messageBytes }

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
    while let newline = buffer[offset...].firstIndex(of: Self.lf) {
      let start = offset
      var end = newline
      if end > start, buffer[end - 1] == Self.cr { end -= 1 }
      let lineOffset = consumedBefore + start
      if messageBytes == 0 { messageStart = lineOffset }
      messageBytes += newline + 1 - start
      offset = newline + 1
      if end - start > maximumLineBytes {
        throw ControlReplyError(
          offset: lineOffset, reason: "line longer than \(maximumLineBytes) bytes")
      }
      if messageBytes > maximumMessageBytes {
        throw ControlReplyError(
          offset: messageStart,
          reason: "message longer than \(maximumMessageBytes) bytes" + unfinishedBlock)
      }
      if dataHeader != nil {
        let line = buffer[start..<end]
        if line.elementsEqual([Self.dot]) {
          finishDataBlock()
        } else {
          if dataLineCount > 0 { dataBytes.append(Self.lf) }
          dataBytes.append(contentsOf: line.first == Self.dot ? line.dropFirst() : line)
          dataLineCount += 1
        }
        continue
      }
      if lines.count >= maximumMessageLines {
        throw ControlReplyError(
          offset: messageStart, reason: "message of more than \(maximumMessageLines) lines")
      }
      let line = String(decoding: buffer[start..<end], as: UTF8.self)
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
    // A line still waiting for its end counts too (less a CR whose LF has not come).
    var pending = buffer.count - offset
    if pending > 0, buffer[buffer.count - 1] == Self.cr { pending -= 1 }
    if pending > maximumLineBytes {
      throw ControlReplyError(
        offset: consumedBefore + offset, reason: "line longer than \(maximumLineBytes) bytes")
    }
    return nil
  }

  private mutating func finishDataBlock() {
    guard let header = dataHeader else { return }
    lines.append(
      .init(
        code: header.code, separator: "+", text: header.text,
        data: String(decoding: dataBytes, as: UTF8.self)))
    dataHeader = nil
    dataBytes = []
    dataLineCount = 0
  }

  /// What the message cap cut short, when it is a data block: its header (the first 40
  /// characters), and that no "." line ended it.
  private var unfinishedBlock: String {
    guard let header = dataHeader else { return "" }
    let text = header.text.count > 40 ? header.text.prefix(40) + "..." : header.text
    return ": the data block of \"\(header.code)+\(text)\" has no \".\" line"
  }

  private static let lf = UInt8(ascii: "\n")
  private static let cr = UInt8(ascii: "\r")
  private static let dot = UInt8(ascii: ".")
}
