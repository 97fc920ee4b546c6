/// What one Swift file imports, declares and mentions, read without a compiler: enough to find
/// in a checkout the file that declares a symbol another file needs (the compiler would find it
/// too, but only after a failed build per step). Comments and string literals are skipped;
/// string interpolations are read as code.
public struct SwiftSourceOutline: Sendable, Hashable {
  /// Modules imported outside any `#if`.
  public var imports: Set<String> = []
  /// Modules imported inside an `#if` that Linux compiles (`canImport(Network)`); an import
  /// in a branch Linux does not compile (`canImport(UIKit)`) is in neither set.
  public var conditionalImports: Set<String> = []
  /// Top-level types, protocols and typealiases.
  public var types: Set<String> = []
  /// Top-level functions, constants and variables.
  public var values: Set<String> = []
  /// Members declared in extensions, by the extended type's last name component.
  public var extensionMembers: [String: Set<String>] = [:]
  /// Members declared in the body of a top-level type, by the type's name (what the driver may
  /// use of it; not visible as names of their own).
  public var typeMembers: [String: Set<String>] = [:]
  /// Capitalised identifiers the file uses (types, top-level names).
  public var typeReferences: Set<String> = []
  /// Identifiers the file uses after a dot (members, enum cases).
  public var memberReferences: Set<String> = []

  /// Every name the file declares where another file can see it.
  public var declaredNames: Set<String> {
    types.union(values).union(
      extensionMembers.values.reduce(into: Set<String>()) { $0.formUnion($1) })
  }

  public init() {}

  public init(source: String) {
    let (tokens, importLines) = Self.tokens(of: source)
    for line in importLines {
      if line.conditional {
        conditionalImports.insert(line.module)
      } else {
        imports.insert(line.module)
      }
    }
    read(tokens)
  }

  static let typeKeywords: Set<String> = [
    "class", "struct", "enum", "protocol", "actor", "typealias",
  ]
  static let valueKeywords: Set<String> = ["func", "var", "let"]

  private mutating func read(_ tokens: [Token]) {
    var depth = 0
    // The extension or type whose body is open, and the depth of its body.
    var openExtension: (name: String, depth: Int)?
    var openType: (name: String, depth: Int)?
    var pendingType: String?
    var index = 0
    while index < tokens.count {
      let token = tokens[index]
      switch token {
      case .open:
        depth += 1
        if depth == 1, let name = pendingType {
          openType = (name, 1)
          pendingType = nil
        }
      case .close:
        depth = max(0, depth - 1)
        if let open = openExtension, depth < open.depth { openExtension = nil }
        if let open = openType, depth < open.depth { openType = nil }
      case .dot:
        if index + 1 < tokens.count, case .word(let name) = tokens[index + 1] {
          memberReferences.insert(name)
          index += 1
        }
      case .word(let word):
        if word.first?.isUppercase == true { typeReferences.insert(word) }
        let next = index + 1 < tokens.count ? tokens[index + 1] : nil
        // `import struct Foundation.Data` declares nothing.
        if index > 0, tokens[index - 1] == .word("import") {
          index += 1
          continue
        }
        if depth == 0, Self.typeKeywords.contains(word), case .word(let name)? = next {
          types.insert(name)
          if word != "typealias" { pendingType = name }
          index += 1
        } else if depth == 0, Self.valueKeywords.contains(word), case .word(let name)? = next {
          values.insert(name)
          index += 1
        } else if depth == 0, word == "extension" {
          // `extension Notification.Name: P where ... {`: the last component before `:`,
          // `where`, `<` or `{` names the type.
          var last = ""
          var cursor = index + 1
          while cursor < tokens.count {
            if case .word(let part) = tokens[cursor], part != "where" {
              last = part
            } else if tokens[cursor] != .dot {
              break
            }
            cursor += 1
          }
          while cursor < tokens.count, tokens[cursor] != .open { cursor += 1 }
          if !last.isEmpty { openExtension = (last, depth + 1) }
          index = cursor - 1
        } else if let open = openExtension, depth == open.depth,
          Self.valueKeywords.contains(word) || Self.typeKeywords.contains(word),
          case .word(let name)? = next
        {
          extensionMembers[open.name, default: []].insert(name)
          index += 1
        } else if let open = openType, depth == open.depth,
          Self.valueKeywords.contains(word) || Self.typeKeywords.contains(word) || word == "case",
          case .word(let name)? = next
        {
          typeMembers[open.name, default: []].insert(name)
          index += 1
        }
      case .other:
        break
      }
      index += 1
    }
  }

  enum Token: Equatable {
    case word(String)
    case open
    case close
    case dot
    case other
  }

  struct ImportLine {
    let module: String
    let conditional: Bool
  }

  /// Words and braces of the code, with comments and literals left out; imports by line.
  static func tokens(of source: String) -> ([Token], [ImportLine]) {
    let scalars = Array(source.unicodeScalars)
    var tokens: [Token] = []
    var imports: [ImportLine] = []
    // `#if` blocks: whether each is compiled on Linux, and whether a branch was taken.
    var blocks: [(active: Bool, taken: Bool)] = []
    var active: Bool { blocks.last?.active ?? true }
    var lineWords: [String] = []
    // Open string literals: (pound count, multiline, interpolation paren depth when inside one).
    var strings: [(pounds: Int, multiline: Bool, parens: Int)] = []
    var inInterpolation = false
    var index = 0

    func finishLine() {
      if active, lineWords.first != nil, let at = lineWords.firstIndex(of: "import"),
        at + 1 < lineWords.count
      {
        // `@preconcurrency import X`, `import struct Foundation.Data`: the module is the first
        // component of the last word.
        let before = lineWords[..<at]
        if before.allSatisfy({ $0.hasPrefix("@") || $0 == "public" || $0 == "internal" }) {
          var module = lineWords[lineWords.count - 1]
          if let dot = module.firstIndex(of: ".") { module = String(module[..<dot]) }
          imports.append(ImportLine(module: module, conditional: !blocks.isEmpty))
        }
      }
      lineWords = []
    }

    while index < scalars.count {
      let c = scalars[index]
      let next: Unicode.Scalar? = index + 1 < scalars.count ? scalars[index + 1] : nil
      if var string = strings.last, !inInterpolation {
        // Inside a literal: look for its end or an interpolation.
        if c == "\\" {
          var cursor = index + 1
          var pounds = 0
          while cursor < scalars.count, scalars[cursor] == "#" {
            pounds += 1
            cursor += 1
          }
          if pounds == string.pounds, cursor < scalars.count, scalars[cursor] == "(" {
            string.parens = 1
            strings[strings.count - 1] = string
            inInterpolation = true
            index = cursor + 1
            continue
          }
          index = pounds == string.pounds ? cursor + 1 : index + 1
          continue
        }
        let quotes = string.multiline ? 3 : 1
        if c == "\"", Self.has(scalars, at: index, quotes: quotes, pounds: string.pounds) {
          strings.removeLast()
          inInterpolation = !strings.isEmpty
          index += quotes + string.pounds
          tokens.append(.other)
          continue
        }
        if c == "\n" { finishLine() }
        index += 1
        continue
      }
      if c == "/" && next == "/" {
        while index < scalars.count, scalars[index] != "\n" { index += 1 }
        continue
      }
      if c == "/" && next == "*" {
        var depth = 0
        while index < scalars.count {
          if scalars[index] == "/", index + 1 < scalars.count, scalars[index + 1] == "*" {
            depth += 1
            index += 2
          } else if scalars[index] == "*", index + 1 < scalars.count, scalars[index + 1] == "/" {
            depth -= 1
            index += 2
            if depth == 0 { break }
          } else {
            if scalars[index] == "\n" { finishLine() }
            index += 1
          }
        }
        continue
      }
      if c == "#" || c == "\"" {
        var cursor = index
        var pounds = 0
        while cursor < scalars.count, scalars[cursor] == "#" {
          pounds += 1
          cursor += 1
        }
        if cursor < scalars.count, scalars[cursor] == "\"" {
          let multiline = Self.has(scalars, at: cursor, quotes: 3, pounds: 0)
          strings.append((pounds, multiline, 0))
          inInterpolation = false
          index = cursor + (multiline ? 3 : 1)
          continue
        }
      }
      if inInterpolation, var string = strings.last {
        if c == "(" { string.parens += 1 }
        if c == ")" {
          string.parens -= 1
          if string.parens == 0 {
            strings[strings.count - 1] = string
            inInterpolation = false
            index += 1
            continue
          }
        }
        strings[strings.count - 1] = string
      }
      if c == "\n" {
        finishLine()
        index += 1
        continue
      }
      if c == "#", lineWords.isEmpty, let directive = Self.directive(scalars, at: index) {
        // A compiler directive line: evaluated for Linux, then skipped.
        switch directive.keyword {
        case "if":
          let on = active && LinuxCondition.evaluate(directive.condition)
          blocks.append((on, on))
        case "elseif":
          if let last = blocks.popLast() {
            let outer = blocks.last?.active ?? true
            let on = outer && !last.taken && LinuxCondition.evaluate(directive.condition)
            blocks.append((on, last.taken || on))
          }
        case "else":
          if let last = blocks.popLast() {
            let outer = blocks.last?.active ?? true
            blocks.append((outer && !last.taken, true))
          }
        case "endif":
          _ = blocks.popLast()
        default:
          break
        }
        index = directive.end
        continue
      }
      if !active {
        // Code Linux does not compile: literals and comments above still delimit it.
        if c == "\n" { finishLine() }
        index += 1
        continue
      }
      if Self.isIdentifierStart(c) || (c == "#" && next.map(Self.isIdentifierStart) == true)
        || (c == "@" && next.map(Self.isIdentifierStart) == true)
      {
        var word = String.UnicodeScalarView()
        word.append(c)
        index += 1
        while index < scalars.count, Self.isIdentifierPart(scalars[index]) {
          word.append(scalars[index])
          index += 1
        }
        var text = String(word)
        // A dotted import path stays one word for the import reader.
        if lineWords.first == "import" || lineWords.contains("import") {
          while index + 1 < scalars.count, scalars[index] == ".",
            Self.isIdentifierStart(scalars[index + 1])
          {
            var more = String.UnicodeScalarView()
            index += 1
            while index < scalars.count, Self.isIdentifierPart(scalars[index]) {
              more.append(scalars[index])
              index += 1
            }
            text += "." + String(more)
          }
        }
        lineWords.append(text)
        if c != "#" && c != "@" { tokens.append(.word(text)) }
        continue
      }
      if c == "`" {
        // A backquoted name is a name.
        var cursor = index + 1
        var word = String.UnicodeScalarView()
        while cursor < scalars.count, scalars[cursor] != "`", scalars[cursor] != "\n" {
          word.append(scalars[cursor])
          cursor += 1
        }
        tokens.append(.word(String(word)))
        lineWords.append(String(word))
        index = cursor + 1
        continue
      }
      switch c {
      case "{": tokens.append(.open)
      case "}": tokens.append(.close)
      case ".": tokens.append(.dot)
      case " ", "\t", "\r": break
      default: tokens.append(.other)
      }
      index += 1
    }
    finishLine()
    return (tokens, imports)
  }

  /// `#if COND`, `#elseif COND`, `#else`, `#endif` at `index`: the keyword, the condition and
  /// where the line ends.
  static func directive(_ scalars: [Unicode.Scalar], at index: Int) -> (
    keyword: String, condition: String, end: Int
  )? {
    var cursor = index + 1
    var keyword = ""
    while cursor < scalars.count, isIdentifierPart(scalars[cursor]) {
      keyword.unicodeScalars.append(scalars[cursor])
      cursor += 1
    }
    guard ["if", "elseif", "else", "endif"].contains(keyword) else { return nil }
    var condition = ""
    while cursor < scalars.count, scalars[cursor] != "\n" {
      if scalars[cursor] == "/", cursor + 1 < scalars.count, scalars[cursor + 1] == "/" { break }
      condition.unicodeScalars.append(scalars[cursor])
      cursor += 1
    }
    while cursor < scalars.count, scalars[cursor] != "\n" { cursor += 1 }
    return (keyword, condition, cursor)
  }

  static func has(_ scalars: [Unicode.Scalar], at index: Int, quotes: Int, pounds: Int) -> Bool {
    guard index + quotes + pounds <= scalars.count else { return false }
    for offset in 0..<quotes where scalars[index + offset] != "\"" { return false }
    for offset in 0..<pounds where scalars[index + quotes + offset] != "#" { return false }
    return true
  }

  static func isIdentifierStart(_ c: Unicode.Scalar) -> Bool {
    c == "_" || (c.properties.isAlphabetic)
  }

  static func isIdentifierPart(_ c: Unicode.Scalar) -> Bool {
    isIdentifierStart(c) || ("0"..."9").contains(c)
  }
}
