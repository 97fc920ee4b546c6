/// Differences between the model and bitchat's code that docs/linux-differences.md explains
/// as Linux-only effects (the bitchat-source lane runs bitchat's iOS code on Linux through the
/// project's shims), by scenario and item (``ScenarioComparison/Item/key``). A comparison
/// counts these as explained and fails on any other. Each entry names its section of the doc;
/// a test holds the doc and this list together.
public struct KnownDifferences: Sendable, Equatable {
  public struct Entry: Sendable, Equatable {
    public var scenario: String
    public var item: String
    /// The doc's section, "L3", and why in one line.
    public var section: String
    public var why: String

    public init(scenario: String, item: String, section: String, why: String) {
      self.scenario = scenario
      self.item = item
      self.section = section
      self.why = why
    }
  }

  public var entries: [Entry]
  /// The document whose sections the entries name.
  public var document: String

  public init(entries: [Entry], document: String = "docs/linux-differences.md") {
    self.entries = entries
    self.document = document
  }

  public func explanation(scenario: String, item: String) -> String? {
    entries.first { $0.scenario == scenario && $0.item == item }
      .map { "\(document) \($0.section): \($0.why)" }
  }

  /// None: every difference counts (`--compare` of two model profiles).
  public static let none = KnownDifferences(entries: [])

  /// The bitchat model against bitchat's code on Linux (docs/linux-differences.md).
  public static let linux = KnownDifferences(entries: LinuxDifferences.entries)

  /// The Onion Browser model against Onion Browser's own Tor layer
  /// (docs/onion-browser-source.md, "Model and code").
  public static let onionBrowser = KnownDifferences(
    entries: OnionBrowserDifferences.entries, document: "docs/onion-browser-source.md")
}
