/// One command as a controller sent it: the keyword (with its leading "+" for a multi-line data
/// command, as tor keeps it), the rest of the first line, and for "+" commands the data lines
/// with dot-stuffing removed.
public struct ControlCommandLine: Hashable, Sendable {
  public let keyword: String
  /// The first line after the keyword, leading whitespace and the line ending removed.
  public let arguments: String
  /// Data lines of a "+" command (CRLF turned into LF, leading dots unstuffed); nil otherwise.
  public let body: String?

  public init(keyword: String, arguments: String, body: String? = nil) {
    self.keyword = keyword
    self.arguments = arguments
    self.body = body
  }

  public var isMultiline: Bool { keyword.hasPrefix("+") }

  /// Splits a complete command (bytes up to and including the last line's LF, without the
  /// terminating "." line) the way tor's control_split_incoming_command does.
  public init(bytes: ArraySlice<UInt8>) {
    let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
    let firstLine = String(decoding: bytes[..<newline], as: UTF8.self)
    let keywordEnd = firstLine.firstIndex(where: ControlArguments.isSpace) ?? firstLine.endIndex
    keyword = String(firstLine[..<keywordEnd])
    arguments = ControlArguments.trim(firstLine[keywordEnd...])
    if bytes.first == UInt8(ascii: "+") {
      let rest = newline < bytes.endIndex ? bytes[(newline + 1)...] : []
      body = ControlCommandLine.unstuff(String(decoding: rest, as: UTF8.self))
    } else {
      body = nil
    }
  }

  private static func unstuff(_ data: String) -> String {
    var lines = data.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
    if lines.last?.isEmpty == true { lines.removeLast() }
    return lines.map { line -> String in
      var line = line
      if line.last == "\r" { line = line.dropLast() }
      if line.first == "." { line = line.dropFirst() }
      return String(String.UnicodeScalarView(line))
    }.joined(separator: "\n")
  }
}

/// Cuts a control connection's byte stream into commands: a line ends at LF (a CR before it is
/// optional, as in tor); a command starting with "+" runs until a line holding only ".".
/// Commands longer than ``maximumCommandBytes`` are refused (tor: "500 Line too long." at
/// 1 MiB; the mock defaults lower so a thousand hostile clients cannot pin a gigabyte).
public struct ControlCommandFramer: Sendable {
  public enum Frame: Hashable, Sendable {
    case command(ControlCommandLine)
    /// The command in progress passed the size cap; the connection should be closed.
    case tooLong
  }

  public static let defaultMaximumCommandBytes = 64 * 1024

  public let maximumCommandBytes: Int
  private var buffer: [UInt8] = []
  /// Offset of the first byte not yet searched for LF.
  private var scanned = 0
  /// Offset where the current line of a multi-line command starts.
  private var lineStart = 0
  private var failed = false

  public init(maximumCommandBytes: Int = ControlCommandFramer.defaultMaximumCommandBytes) {
    self.maximumCommandBytes = maximumCommandBytes
  }

  /// Bytes received and not yet part of a returned command.
  public var pending: ArraySlice<UInt8> { buffer[...] }

  public mutating func append(_ bytes: some Sequence<UInt8>) {
    guard !failed else { return }
    buffer.append(contentsOf: bytes)
  }

  /// The next complete command, `.tooLong` once the cap is passed, or nil when more bytes are
  /// needed.
  public mutating func next() -> Frame? {
    guard !failed else { return nil }
    while let newline = buffer[scanned...].firstIndex(of: UInt8(ascii: "\n")) {
      scanned = newline + 1
      if scanned > maximumCommandBytes { return fail() }
      let line = buffer[lineStart..<scanned]
      let isFirstLine = lineStart == 0
      if isFirstLine && buffer.first != UInt8(ascii: "+") {
        return take(commandEnd: scanned, consumed: scanned)
      }
      if !isFirstLine && (line.elementsEqual(".\r\n".utf8) || line.elementsEqual(".\n".utf8)) {
        return take(commandEnd: lineStart, consumed: scanned)
      }
      lineStart = scanned
    }
    scanned = buffer.count
    if buffer.count > maximumCommandBytes { return fail() }
    return nil
  }

  private mutating func take(commandEnd: Int, consumed: Int) -> Frame {
    let command = ControlCommandLine(bytes: buffer[0..<commandEnd])
    buffer.removeFirst(consumed)
    scanned = 0
    lineStart = 0
    return .command(command)
  }

  private mutating func fail() -> Frame {
    failed = true
    buffer = []
    return .tooLong
  }
}
