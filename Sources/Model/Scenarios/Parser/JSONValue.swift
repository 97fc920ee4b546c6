/// A JSON document as a tree that keeps what Foundation's JSONSerialization loses on Linux:
/// the difference between `true` and `1`, the order of an object's keys (reports stay stable
/// and diffable), and the line of each syntax error.
public indirect enum JSONValue: Sendable, Equatable {
  case null
  case bool(Bool)
  case number(Double)
  case string(String)
  case array([JSONValue])
  /// Key order as written; duplicate keys are rejected by the parser.
  case object([(key: String, value: JSONValue)])

  public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null): return true
    case (.bool(let a), .bool(let b)): return a == b
    case (.number(let a), .number(let b)): return a == b
    case (.string(let a), .string(let b)): return a == b
    case (.array(let a), .array(let b)): return a == b
    case (.object(let a), .object(let b)):
      return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    default: return false
    }
  }

  /// The member named `key` of an object, nil otherwise.
  public subscript(key: String) -> JSONValue? {
    guard case .object(let members) = self else { return nil }
    return members.first { $0.key == key }?.value
  }

  /// A short description of the value for error messages: `"soon"`, `12`, `an object`.
  public var shortDescription: String {
    switch self {
    case .null: return "null"
    case .bool(let b): return b ? "true" : "false"
    case .number: return serialized()
    case .string(let s):
      let clipped = s.count > 40 ? String(s.prefix(40)) + "..." : s
      return JSONValue.string(clipped).serialized()
    case .array: return "an array"
    case .object: return "an object"
    }
  }
}
