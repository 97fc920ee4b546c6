/// What a failed build says about the checkout's files the closure brought along (not the Tor
/// layer's own): each such file with an error is one that cannot be compiled here, and the
/// package is tried again without it, a stand-in taking its place where there is one. Bounded:
/// each round leaves out at least one file, and at most `maxRounds` rounds are built.
enum BitchatCompileFeedback {
  static let maxRounds = 4

  /// Checkout files (relative paths) with their first error, among `candidates`.
  static func failedFiles(in output: String, links: [String: String], candidates: Set<String>)
    -> [String: String]
  {
    var failed: [String: String] = [:]
    for line in output.split(separator: "\n") {
      guard let range = line.range(of: ": error: ") else { continue }
      let location = line[..<range.lowerBound].split(separator: ":")
      guard location.count >= 3 else { continue }
      let path = location.dropLast(2).joined(separator: ":")
      guard let relative = links[path], candidates.contains(relative), failed[relative] == nil
      else { continue }
      failed[relative] = "it did not compile here (\(line[range.upperBound...]))"
    }
    return failed
  }
}
