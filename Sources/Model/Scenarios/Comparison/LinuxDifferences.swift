/// docs/linux-differences.md as data: each Linux-only difference between the model
/// (`bitchat`) and bitchat's own code (`bitchat-source`), by scenario and item.
enum LinuxDifferences {
  static let entries: [KnownDifferences.Entry] = []
}
