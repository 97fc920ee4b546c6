/// Character classes of RFC 9110/9112, shared by encoders (to refuse what cannot be sent) and
/// parsers (to refuse what should not have been).
enum HTTPSyntax {
  /// tchar: the characters of a method or a field name.
  static func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"):
      return true
    default:
      return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
    }
  }

  static func isToken(_ text: String) -> Bool {
    !text.isEmpty && text.utf8.allSatisfy(isTokenByte)
  }

  /// Field values: visible bytes, space, tab and obs-text; never CR, LF, NUL or other controls.
  static func isFieldValueByte(_ byte: UInt8) -> Bool {
    byte == 0x09 || (byte >= 0x20 && byte != 0x7F)
  }

  static func validateField(name: String, value: String) throws {
    guard isToken(name) else {
      throw HTTPCodecError(
        .invalidField(name: "header name \"\(name)\"", detail: "not a token"), offset: nil)
    }
    guard value.utf8.allSatisfy(isFieldValueByte) else {
      throw HTTPCodecError(
        .invalidField(name: "header \(name)", detail: "value has a control character"),
        offset: nil)
    }
  }

  /// A printable rendering of bytes for error messages, cut at `limit` characters.
  static func quote(_ bytes: some Collection<UInt8>, limit: Int = 60) -> String {
    var text = ""
    for byte in bytes.prefix(limit) {
      if byte >= 0x20 && byte < 0x7F {
        text.append(Character(UnicodeScalar(byte)))
      } else {
        text += "\\x" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
      }
    }
    if bytes.count > limit { text += "..." }
    return "\"\(text)\""
  }
}

extension String {
  func leftPadded(to width: Int) -> String {
    count >= width ? self : String(repeating: "0", count: width - count) + self
  }
}
