/// The shims' driver (BitchatShims/Driver, built in bitchat's own Swift 5 package, which
/// cannot import the project's modules) reads its verbs from a generated copy of
/// ``ActionVerbs/all``; a test holds the committed file equal to this text.
extension ActionVerbs {
  /// The copy's path under the project's root.
  public static let shimsCopyPath = "BitchatShims/Driver/DriverVerbs.swift"

  /// The verbs bitchat's own code acts on, with their actions-file field and its fallback,
  /// as a Swift file.
  public static func shimsCopy(of verbs: [ActionVerb] = all) -> String {
    var lines = [
      "// Generated from Sources/Vocabulary/ActionVerbs.swift: do not edit. Regenerate with",
      "// FAILCLOSED_REGENERATE=1 swift test --filter VocabularyTests (a test holds the two equal).",
      "",
      "/// The actions-file verbs bitchat's code acts on: name, argument field, its fallback.",
      "let driverVerbs: [(name: String, field: String?, fallback: String?)] = [",
    ]
    for verb in verbs where verb.inActionsFiles && verb.apps.contains(.bitchat) {
      let argument = verb.driverArgument
      let fallback: String?
      switch argument?.values {
      case .text(let value)?, .choice(_, let value)?: fallback = value
      default: fallback = nil
      }
      lines.append(
        "  (\(quoted(verb.name)), \(argument.map { quoted($0.field) } ?? "nil"), "
          + "\(fallback.map(quoted) ?? "nil")),")
    }
    lines.append("]")
    return lines.joined(separator: "\n") + "\n"
  }

  private static func quoted(_ text: String) -> String { "\"" + text + "\"" }
}
