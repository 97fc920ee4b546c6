/// Argument syntax of the control protocol as tor parses it: positional arguments split on
/// spaces, keyword arguments (`Key`, `Key=Value`, `Key="quoted \"value\""`), and
/// control-spec quoted strings with C escapes.
public enum ControlArguments {
  /// tor's TOR_ISSPACE: space, tab, CR, LF, vertical tab, form feed.
  public static func isSpace(_ character: Character) -> Bool {
    // "\r\n" is one Character in Swift.
    character == " " || character == "\t" || character == "\r" || character == "\n"
      || character == "\r\n" || character == "\u{0B}" || character == "\u{0C}"
  }

  public static func trim(_ text: Substring) -> String {
    guard let first = text.firstIndex(where: { !isSpace($0) }),
      let last = text.lastIndex(where: { !isSpace($0) })
    else { return "" }
    return String(text[first...last])
  }

  /// Positional arguments: split on single spaces, each trimmed, blanks dropped. With a
  /// `limit`, the last piece keeps the rest of the line (tor's smartlist_split_string max).
  public static func split(_ text: String, limit: Int? = nil) -> [String] {
    var pieces: [String] = []
    var rest = Substring(text)
    while !rest.isEmpty {
      if let limit, pieces.count == limit - 1 {
        let last = trim(rest)
        if !last.isEmpty { pieces.append(last) }
        break
      }
      let end = rest.firstIndex(of: " ") ?? rest.endIndex
      let piece = trim(rest[..<end])
      if !piece.isEmpty { pieces.append(piece) }
      rest = end < rest.endIndex ? rest[rest.index(after: end)...] : ""
    }
    return pieces
  }

  /// One keyword argument; `key` is empty for a bare value when keys may be omitted, `value`
  /// nil for a bare key when values may be omitted.
  public struct KeyValue: Hashable, Sendable {
    public let key: String
    public let value: String?
    public let quoted: Bool

    public init(key: String, value: String?, quoted: Bool = false) {
      self.key = key
      self.value = value
      self.quoted = quoted
    }
  }

  /// Parses keyword arguments like tor's kvline_parse. `omitKeys`: a bare token (or quoted
  /// string) is a value with an empty key (AUTHENTICATE). `omitValues`: a bare token is a key
  /// with no value (SETCONF). Returns nil when the text cannot be parsed.
  public static func keyValues(_ text: String, omitKeys: Bool, omitValues: Bool) -> [KeyValue]? {
    var result: [KeyValue] = []
    let chars = Array(text)
    var index = 0
    while true {
      while index < chars.count, isSpace(chars[index]) { index += 1 }
      guard index < chars.count else { return result }
      if omitKeys, chars[index] == "\"" {
        guard let (value, end) = decodeQuoted(chars, from: index) else { return nil }
        guard end == chars.count || isSpace(chars[end]) else { return nil }
        result.append(KeyValue(key: "", value: value, quoted: true))
        index = end
        continue
      }
      var keyEnd = index
      while keyEnd < chars.count, !isSpace(chars[keyEnd]), chars[keyEnd] != "=" {
        guard chars[keyEnd] != "\"" else { return nil }
        keyEnd += 1
      }
      let token = String(chars[index..<keyEnd])
      if keyEnd < chars.count, chars[keyEnd] == "=" {
        guard !token.isEmpty else { return nil }
        var valueStart = keyEnd + 1
        if valueStart < chars.count, chars[valueStart] == "\"" {
          guard let (value, end) = decodeQuoted(chars, from: valueStart) else { return nil }
          guard end == chars.count || isSpace(chars[end]) else { return nil }
          result.append(KeyValue(key: token, value: value, quoted: true))
          index = end
        } else {
          var valueEnd = valueStart
          while valueEnd < chars.count, !isSpace(chars[valueEnd]) {
            guard chars[valueEnd] != "\"" else { return nil }
            valueEnd += 1
          }
          result.append(KeyValue(key: token, value: String(chars[valueStart..<valueEnd])))
          valueStart = valueEnd
          index = valueEnd
        }
      } else if omitKeys {
        result.append(KeyValue(key: "", value: token))
        index = keyEnd
      } else if omitValues {
        result.append(KeyValue(key: token, value: nil))
        index = keyEnd
      } else {
        return nil
      }
    }
  }

  /// Decodes a quoted string starting at `chars[start] == "\""`: escapes \\ \" \' \n \r \t,
  /// \xHH and octal \NNN. Returns the value and the index after the closing quote.
  public static func decodeQuoted(_ chars: [Character], from start: Int) -> (String, Int)? {
    guard start < chars.count, chars[start] == "\"" else { return nil }
    var bytes: [UInt8] = []
    var index = start + 1
    while index < chars.count {
      let character = chars[index]
      if character == "\"" {
        return (String(decoding: bytes, as: UTF8.self), index + 1)
      }
      if character == "\r" || character == "\n" || character == "\r\n" { return nil }
      if character != "\\" {
        bytes.append(contentsOf: Array(String(character).utf8))
        index += 1
        continue
      }
      index += 1
      guard index < chars.count else { return nil }
      let escaped = chars[index]
      switch escaped {
      case "n": bytes.append(0x0A)
      case "r": bytes.append(0x0D)
      case "t": bytes.append(0x09)
      case "\\", "\"", "'": bytes.append(contentsOf: Array(String(escaped).utf8))
      case "x":
        guard index + 2 < chars.count,
          let value = UInt8(String(chars[index + 1...index + 2]), radix: 16)
        else { return nil }
        bytes.append(value)
        index += 2
      case "0"..."7":
        guard index + 2 < chars.count,
          let value = UInt16(String(chars[index...index + 2]), radix: 8), value <= 255
        else { return nil }
        bytes.append(UInt8(value))
        index += 2
      default:
        return nil
      }
      index += 1
    }
    return nil
  }

  /// Encodes `text` as a control-spec quoted string (the reverse of ``decodeQuoted``).
  public static func quote(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      default:
        if scalar.value < 0x20 || scalar.value == 0x7F {
          let octal = String(scalar.value, radix: 8)
          out += "\\" + String(repeating: "0", count: 3 - octal.count) + octal
        } else {
          out.unicodeScalars.append(scalar)
        }
      }
    }
    return out + "\""
  }

  /// Decodes hex digits (either case) into bytes; nil for odd length or a non-hex digit.
  public static func decodeHex(_ text: String) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    var index = 0
    while index < digits.count {
      guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else {
        return nil
      }
      bytes.append(high << 4 | low)
      index += 2
    }
    return bytes
  }

  public static func encodeHex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789ABCDEF".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count * 2)
    for byte in bytes {
      out.append(digits[Int(byte >> 4)])
      out.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: out, as: UTF8.self)
  }

  private static func hexValue(_ digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
    default: return nil
    }
  }
}
