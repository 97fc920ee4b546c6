import Scenarios

/// Escapes text for XML and HTML content and attribute values; drops the control characters
/// XML 1.0 forbids so a hostile DNS name in the evidence cannot break the document.
func xmlEscaped(_ text: String) -> String {
  var out = ""
  out.reserveCapacity(text.count)
  for scalar in text.unicodeScalars {
    switch scalar {
    case "&": out += "&amp;"
    case "<": out += "&lt;"
    case ">": out += "&gt;"
    case "\"": out += "&quot;"
    case "'": out += "&apos;"
    case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
    case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF:
      out += "?"
    default: out.unicodeScalars.append(scalar)
    }
  }
  return out
}
