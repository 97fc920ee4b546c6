/// JSON string quoting (RFC 8259) for the hand-written JSON lines and documents: small enough
/// not to need an encoder per line, and one place that decides the escapes.
public enum JSONText {
  /// `text` as a JSON string literal. With `escapingLessThan`, "<" becomes \u003c, so a
  /// document embedded in HTML can never close its <script> element.
  public static func quote(_ text: String, escapingLessThan: Bool = false) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case "<" where escapingLessThan: out += "\\u003c"
      case _ where scalar.value < 0x20:
        let hex = String(scalar.value, radix: 16)
        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out + "\""
  }
}
