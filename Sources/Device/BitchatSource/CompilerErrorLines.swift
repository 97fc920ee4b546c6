import Foundation

/// The `PATH:LINE:COLUMN: error: MESSAGE` lines of a generated package's build, each mapped
/// back to the checkout file its link names: what bitchat's and Onion Browser's diagnostics
/// both read.
enum CompilerErrorLines {
  struct Entry {
    /// The file's path in the checkout (the link's target, relative).
    var relative: String
    var line: Int
    /// The unknown name the message is about, and where it was looked up (``symbol(in:)``).
    var symbol: String
    var owner: String?
    var message: String
  }

  /// Every error line about an unknown name in a linked file, once per file, line and name.
  static func unknownSymbols(in output: String, links: [String: String]) -> [Entry] {
    var entries: [Entry] = []
    var seen = Set<String>()
    for line in output.split(separator: "\n") {
      let text = String(line)
      guard let range = text.range(of: ": error: ") else { continue }
      let location = text[..<range.lowerBound].split(separator: ":")
      guard location.count >= 3, let lineNumber = Int(location[location.count - 2]) else {
        continue
      }
      let path = location.dropLast(2).joined(separator: ":")
      let message = String(text[range.upperBound...])
      guard let relative = links[path] ?? links[(path as NSString).standardizingPath],
        let (symbol, owner) = BitchatDiagnostics.symbol(in: message),
        seen.insert("\(relative):\(lineNumber):\(symbol)").inserted
      else { continue }
      entries.append(
        Entry(relative: relative, line: lineNumber, symbol: symbol, owner: owner, message: message))
    }
    return entries
  }

  /// The first five error lines, for a failure no entry explains.
  static func summary(_ output: String) -> String {
    output.split(separator: "\n").filter { $0.contains(": error: ") }.prefix(5).joined(
      separator: "\n")
  }
}
