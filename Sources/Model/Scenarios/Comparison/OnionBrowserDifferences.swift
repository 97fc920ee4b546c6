/// docs/onion-browser-source.md ("Model and code") as data: each difference between the Onion
/// Browser model (`onion-browser-2`, `onion-browser-3`) and Onion Browser's own Tor layer
/// (`onion-browser-source`), by scenario and item, with the doc's section. A test holds the
/// doc and this list together.
enum OnionBrowserDifferences {
  static let entries: [KnownDifferences.Entry] = []
}
