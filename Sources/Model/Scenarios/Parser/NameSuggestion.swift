/// "Did you mean" for a misspelt name: the closest known name by edit distance, when it is close
/// enough to be the likely intent (a typo, not a different word).
enum NameSuggestion {
  /// The closest of `known` to `name`, or nil when none is within a third of the name's length
  /// (at least 1, at most 3 edits).
  static func closest(to name: String, in known: [String]) -> String? {
    let limit = min(3, max(1, name.count / 3))
    var best: (name: String, distance: Int)?
    for candidate in known where candidate != name {
      let distance = editDistance(name.lowercased(), candidate.lowercased())
      if distance <= limit, distance < (best?.distance ?? Int.max) {
        best = (candidate, distance)
      }
    }
    return best?.name
  }

  /// " (did you mean \"x\"?)", or "" when nothing is close.
  static func hint(for name: String, in known: [String]) -> String {
    closest(to: name, in: known).map { " (did you mean \"\($0)\"?)" } ?? ""
  }

  /// Levenshtein distance, with a transposition of neighbours counted as one edit.
  static func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a)
    let b = Array(b)
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous2 = [Int](repeating: 0, count: b.count + 1)
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
      current[0] = i
      for j in 1...b.count {
        let cost = a[i - 1] == b[j - 1] ? 0 : 1
        current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
        if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
          current[j] = min(current[j], previous2[j - 2] + 1)
        }
      }
      (previous2, previous, current) = (previous, current, previous2)
    }
    return previous[b.count]
  }
}
