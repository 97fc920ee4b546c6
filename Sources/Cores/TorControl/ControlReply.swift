/// A control-protocol reply as the server writes it: lines "CODE-text" (more follow),
/// "CODE+text" (a data block follows, ended by "."), and the last line "CODE text", each ended by
/// CRLF (control-spec section 2.3, tor's control_proto.c).
public struct ControlReply: Hashable, Sendable {
  public struct Line: Hashable, Sendable {
    public let code: Int
    public let text: String
    /// Lines of a data block written after a "+" line; nil for a plain line.
    public let data: String?

    public init(code: Int, text: String, data: String? = nil) {
      self.code = code
      self.text = text
      self.data = data
    }
  }

  public var lines: [Line]

  public init(_ lines: [Line]) { self.lines = lines }

  /// A one-line reply, e.g. `ControlReply(250, "OK")`.
  public init(_ code: Int, _ text: String) { lines = [Line(code: code, text: text)] }

  public static let ok = ControlReply(250, "OK")

  /// A `key=value` line, switched to the data form (`250+key=` + block) when the value spans
  /// lines, as tor's control_write_reply_line does.
  public static func keyValue(code: Int = 250, _ key: String, _ value: String) -> Line {
    if value.contains("\n") || value.contains("\r") {
      return Line(code: code, text: "\(key)=", data: value)
    }
    return Line(code: code, text: "\(key)=\(value)")
  }

  public var bytes: [UInt8] { Array(text.utf8) }

  public var text: String {
    var out = ""
    for (index, line) in lines.enumerated() {
      if let data = line.data {
        out += "\(line.code)+\(line.text)\r\n" + ControlReply.dotStuff(data)
        // A data line is never the final line: tor always ends with "250 OK" after it.
        if index == lines.count - 1 { out += "\(line.code) OK\r\n" }
        continue
      }
      let separator = index == lines.count - 1 ? " " : "-"
      out += "\(line.code)\(separator)\(line.text)\r\n"
    }
    return out
  }

  /// tor's write_escaped_data: LF becomes CRLF, a leading "." is doubled, and the block ends
  /// with ".\r\n".
  public static func dotStuff(_ data: String) -> String {
    var lines = data.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
      .map { line -> String in
        var line = String(String.UnicodeScalarView(line))
        if line.hasSuffix("\r") { line.removeLast() }
        return line.hasPrefix(".") ? "." + line : line
      }
    if lines.last == "" { lines.removeLast() }
    return lines.map { $0 + "\r\n" }.joined() + ".\r\n"
  }
}
