/// Evaluates a `#if` condition as the lane's build does: Linux on x86_64, `-D DEBUG`, the
/// toolchain's and the shims' modules importable (SwiftSourceOutline skips what Linux does not
/// compile, such as a whole file under `#if os(iOS) || os(macOS)`).
enum LinuxCondition {
  static let flags: Set<String> = ["DEBUG"]

  static func evaluate(_ condition: String) -> Bool {
    var parser = Parser(text: Array(condition.unicodeScalars))
    return parser.orExpression()
  }

  /// A predicate: `os(Linux)`, `canImport(UIKit)`, `arch(x86_64)`, `swift(>=5.9)`, a flag.
  static func predicate(_ name: String, _ argument: String?) -> Bool {
    guard let argument else { return flags.contains(name) || name == "true" }
    let value = argument.trimmingSpaces
    switch name {
    case "os": return value == "Linux"
    case "canImport":
      let module = value.split(separator: ".").first.map(String.init) ?? value
      return BitchatSourceClosure.linuxModules.contains(module)
    case "arch": return value == "x86_64"
    case "swift", "compiler": return value.hasPrefix(">=")
    case "targetEnvironment": return false
    case "hasFeature", "hasAttribute": return true
    default: return false
    }
  }

  struct Parser {
    let text: [Unicode.Scalar]
    var index = 0

    mutating func skipSpaces() {
      while index < text.count, text[index] == " " || text[index] == "\t" { index += 1 }
    }

    mutating func orExpression() -> Bool {
      var value = andExpression()
      while consume("||") { value = andExpression() || value }
      return value
    }

    mutating func andExpression() -> Bool {
      var value = unary()
      while consume("&&") { value = unary() && value }
      return value
    }

    mutating func unary() -> Bool {
      skipSpaces()
      if consume("!") { return !unary() }
      if consume("(") {
        let value = orExpression()
        _ = consume(")")
        return value
      }
      var name = ""
      while index < text.count, SwiftSourceOutline.isIdentifierPart(text[index]) {
        name.unicodeScalars.append(text[index])
        index += 1
      }
      skipSpaces()
      guard index < text.count, text[index] == "(" else {
        return LinuxCondition.predicate(name, nil)
      }
      index += 1
      var argument = ""
      while index < text.count, text[index] != ")" {
        argument.unicodeScalars.append(text[index])
        index += 1
      }
      index += 1
      return LinuxCondition.predicate(name, argument)
    }

    mutating func consume(_ token: String) -> Bool {
      skipSpaces()
      let scalars = Array(token.unicodeScalars)
      guard index + scalars.count <= text.count,
        Array(text[index..<index + scalars.count]) == scalars
      else { return false }
      index += scalars.count
      return true
    }
  }
}

extension String {
  fileprivate var trimmingSpaces: String {
    String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
  }
}
