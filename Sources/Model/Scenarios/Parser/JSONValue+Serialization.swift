import FailClosedSupport

extension JSONValue {
  /// Serialises with keys in their given order. `indent` nil gives one line; otherwise each
  /// nesting level is indented by that many spaces.
  public func serialized(indent: Int? = nil) -> String {
    var out = ""
    write(into: &out, indent: indent, level: 0)
    return out
  }

  private func write(into out: inout String, indent: Int?, level: Int) {
    switch self {
    case .null: out += "null"
    case .bool(let b): out += b ? "true" : "false"
    case .number(let n):
      if n.rounded() == n, abs(n) < 1e15 {
        out += String(Int64(n))
      } else {
        out += "\(n)"
      }
    case .string(let s): JSONValue.writeString(s, into: &out)
    case .array(let elements):
      if elements.isEmpty {
        out += "[]"
        return
      }
      out += "["
      for (i, element) in elements.enumerated() {
        if i > 0 { out += "," }
        newline(&out, indent: indent, level: level + 1)
        element.write(into: &out, indent: indent, level: level + 1)
      }
      newline(&out, indent: indent, level: level)
      out += "]"
    case .object(let members):
      if members.isEmpty {
        out += "{}"
        return
      }
      out += "{"
      for (i, member) in members.enumerated() {
        if i > 0 { out += "," }
        newline(&out, indent: indent, level: level + 1)
        JSONValue.writeString(member.key, into: &out)
        out += indent == nil ? ":" : ": "
        member.value.write(into: &out, indent: indent, level: level + 1)
      }
      newline(&out, indent: indent, level: level)
      out += "}"
    }
  }

  private func newline(_ out: inout String, indent: Int?, level: Int) {
    guard let indent else { return }
    out += "\n" + String(repeating: " ", count: indent * level)
  }

  /// "<" escaped so a report embedded in HTML can never close its <script> element.
  private static func writeString(_ s: String, into out: inout String) {
    out += JSONText.quote(s, escapingLessThan: true)
  }
}
