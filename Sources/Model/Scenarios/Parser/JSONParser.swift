/// A syntax error in a JSON text, with the 1-based line and column where it was found.
public struct JSONSyntaxError: Error, Equatable, CustomStringConvertible {
  public let line: Int
  public let column: Int
  public let message: String

  public var description: String { "line \(line) column \(column): \(message)" }
}

/// RFC 8259 JSON parser over UTF-8 bytes. Pure; bounded nesting so a hostile file cannot
/// exhaust the stack.
public struct JSONParser {
  private let bytes: [UInt8]
  private var index = 0
  private var depth = 0
  private static let maxDepth = 64

  public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
    try parse(Array(text.utf8))
  }

  public static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
    var parser = JSONParser(bytes: bytes)
    // A UTF-8 byte order mark is tolerated, as editors on some systems write one.
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.index = 3 }
    parser.skipWhitespace()
    let value = try parser.parseValue()
    parser.skipWhitespace()
    if parser.index < bytes.count {
      throw parser.error("unexpected text after the end of the document")
    }
    return value
  }

  private init(bytes: [UInt8]) { self.bytes = bytes }

  private func error(_ message: String) -> JSONSyntaxError {
    var line = 1
    var column = 1
    for byte in bytes[0..<min(index, bytes.count)] {
      if byte == UInt8(ascii: "\n") {
        line += 1
        column = 1
      } else if byte & 0xC0 != 0x80 {
        column += 1
      }
    }
    return JSONSyntaxError(line: line, column: column, message: message)
  }

  private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

  private mutating func skipWhitespace() {
    while let byte = current,
      byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    {
      index += 1
    }
  }

  private mutating func parseValue() throws(JSONSyntaxError) -> JSONValue {
    guard let byte = current else { throw error("expected a value, got the end of the file") }
    switch byte {
    case UInt8(ascii: "{"): return try parseObject()
    case UInt8(ascii: "["): return try parseArray()
    case UInt8(ascii: "\""): return .string(try parseString())
    case UInt8(ascii: "t"): return try parseLiteral("true", .bool(true))
    case UInt8(ascii: "f"): return try parseLiteral("false", .bool(false))
    case UInt8(ascii: "n"): return try parseLiteral("null", .null)
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
    default:
      throw error("expected a value, got '\(String(decoding: [byte], as: UTF8.self))'")
    }
  }

  private mutating func parseLiteral(_ word: String, _ value: JSONValue) throws(JSONSyntaxError)
    -> JSONValue
  {
    let wordBytes = Array(word.utf8)
    guard index + wordBytes.count <= bytes.count,
      Array(bytes[index..<index + wordBytes.count]) == wordBytes
    else { throw error("expected '\(word)'") }
    index += wordBytes.count
    return value
  }

  private mutating func enter() throws(JSONSyntaxError) {
    depth += 1
    if depth > JSONParser.maxDepth { throw error("nesting deeper than \(JSONParser.maxDepth)") }
  }

  private mutating func parseObject() throws(JSONSyntaxError) -> JSONValue {
    try enter()
    defer { depth -= 1 }
    index += 1
    var members: [(key: String, value: JSONValue)] = []
    // A set beside the ordered members: the duplicate check stays linear (an object of 40,000
    // keys took minutes with a scan per key).
    var keys: Set<String> = []
    skipWhitespace()
    if current == UInt8(ascii: "}") {
      index += 1
      return .object(members)
    }
    while true {
      skipWhitespace()
      guard current == UInt8(ascii: "\"") else { throw error("expected a quoted member name") }
      let keyStart = index
      let key = try parseString()
      if !keys.insert(key).inserted {
        index = keyStart
        throw error("duplicate member \"\(key)\"")
      }
      skipWhitespace()
      guard current == UInt8(ascii: ":") else { throw error("expected ':' after \"\(key)\"") }
      index += 1
      skipWhitespace()
      members.append((key, try parseValue()))
      skipWhitespace()
      switch current {
      case UInt8(ascii: ","): index += 1
      case UInt8(ascii: "}"):
        index += 1
        return .object(members)
      default: throw error("expected ',' or '}' in an object")
      }
    }
  }

  private mutating func parseArray() throws(JSONSyntaxError) -> JSONValue {
    try enter()
    defer { depth -= 1 }
    index += 1
    var elements: [JSONValue] = []
    skipWhitespace()
    if current == UInt8(ascii: "]") {
      index += 1
      return .array(elements)
    }
    while true {
      skipWhitespace()
      elements.append(try parseValue())
      skipWhitespace()
      switch current {
      case UInt8(ascii: ","): index += 1
      case UInt8(ascii: "]"):
        index += 1
        return .array(elements)
      default: throw error("expected ',' or ']' in an array")
      }
    }
  }

  private mutating func parseString() throws(JSONSyntaxError) -> String {
    index += 1
    var out: [UInt8] = []
    while true {
      guard let byte = current else { throw error("unterminated string") }
      index += 1
      switch byte {
      case UInt8(ascii: "\""):
        return String(decoding: out, as: UTF8.self)
      case UInt8(ascii: "\\"):
        guard let escape = current else { throw error("unterminated escape") }
        index += 1
        switch escape {
        case UInt8(ascii: "\""): out.append(0x22)
        case UInt8(ascii: "\\"): out.append(0x5C)
        case UInt8(ascii: "/"): out.append(0x2F)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
          var scalar = try parseHex4()
          if (0xD800..<0xDC00).contains(scalar) {
            guard current == UInt8(ascii: "\\"), index + 1 < bytes.count,
              bytes[index + 1] == UInt8(ascii: "u")
            else { throw error("unpaired surrogate in \\u escape") }
            index += 2
            let low = try parseHex4()
            guard (0xDC00..<0xE000).contains(low) else { throw error("bad low surrogate") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
          }
          guard let unicode = Unicode.Scalar(scalar) else {
            throw error("invalid \\u escape")
          }
          out.append(contentsOf: Array(String(Character(unicode)).utf8))
        default: throw error("invalid escape '\\\(String(decoding: [escape], as: UTF8.self))'")
        }
      case 0..<0x20:
        index -= 1
        throw error("control character in a string (escape it)")
      default:
        out.append(byte)
      }
    }
  }

  private mutating func parseHex4() throws(JSONSyntaxError) -> UInt32 {
    var value: UInt32 = 0
    for _ in 0..<4 {
      guard let byte = current else { throw error("short \\u escape") }
      let digit: UInt32
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
      default: throw error("bad hex digit in \\u escape")
      }
      value = value * 16 + digit
      index += 1
    }
    return value
  }

  private mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
    let start = index
    if current == UInt8(ascii: "-") { index += 1 }
    guard let first = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
      throw error("expected a digit")
    }
    if first == UInt8(ascii: "0") {
      index += 1
    } else {
      skipDigits()
    }
    if current == UInt8(ascii: ".") {
      index += 1
      guard digitCount() > 0 else { throw error("expected a digit after '.'") }
    }
    if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
      index += 1
      if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
      guard digitCount() > 0 else { throw error("expected a digit in the exponent") }
    }
    let text = String(decoding: bytes[start..<index], as: UTF8.self)
    guard let value = Double(text), value.isFinite else {
      index = start
      throw error("number out of range")
    }
    return .number(value)
  }

  private mutating func skipDigits() { _ = digitCount() }

  private mutating func digitCount() -> Int {
    var count = 0
    while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
      index += 1
      count += 1
    }
    return count
  }
}
