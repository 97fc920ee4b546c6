/// Each app family's shims driver (BitchatShims/Driver, OnionBrowserShims/Driver: built in the
/// app's own Swift 5 package, which cannot import the project's modules) reads its verbs from
/// a generated copy of ``ActionVerbs/all``; a test holds each committed file equal to its text.
extension ActionVerbs {
  /// One family's generated copy: where it is committed and the name of its list.
  public struct ShimsCopy: Sendable {
    public let family: AppFamilies
    /// Under the project's root.
    public let path: String
    /// The Swift constant the driver reads.
    public let constant: String
    /// The app, for the copy's comment.
    public let app: String
  }

  /// Every family whose own code runs under a driver of the shims.
  public static let shimsCopies = [
    ShimsCopy(
      family: .bitchat, path: "BitchatShims/Driver/DriverVerbs.swift", constant: "driverVerbs",
      app: "bitchat's code"),
    ShimsCopy(
      family: .onionBrowser, path: "OnionBrowserShims/Driver/DriverVerbs.swift",
      constant: "harnessVerbs", app: "Onion Browser's delegates"),
  ]

  /// The verbs of `copy`'s family, with their actions-file field and its fallback, as a Swift
  /// file.
  public static func shimsCopy(_ copy: ShimsCopy, of verbs: [ActionVerb] = all) -> String {
    var lines = [
      "// Generated from Sources/Vocabulary/ActionVerbs.swift: do not edit. Regenerate with",
      "// FAILCLOSED_REGENERATE=1 swift test --filter VocabularyTests (a test holds the two equal).",
      "",
      "/// The actions-file verbs \(copy.app) act\(copy.app.hasSuffix("s") ? "" : "s") on: "
        + "name, argument field, its fallback.",
      "let \(copy.constant): [(name: String, field: String?, fallback: String?)] = [",
    ]
    for verb in verbs where verb.inActionsFiles && verb.apps.contains(copy.family) {
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
