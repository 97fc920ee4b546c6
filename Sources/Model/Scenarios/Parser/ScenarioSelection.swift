/// `--filter` and `--shard I/N`: which scenarios this invocation runs.
public enum ScenarioSelection {
  /// A shard of a CI matrix: the `index`-th (1-based) of `count`.
  public struct Shard: Sendable, Equatable {
    public let index: Int
    public let count: Int

    /// Parses "I/N" with 1 <= I <= N.
    public init(parsing text: String) throws(SelectionError) {
      let parts = text.split(separator: "/", omittingEmptySubsequences: false)
      guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]), count >= 1,
        index >= 1, index <= count
      else {
        throw SelectionError(
          message: "--shard: expected I/N with 1 <= I <= N (e.g. 2/4), got \"\(text)\"")
      }
      self.index = index
      self.count = count
    }
  }

  public struct SelectionError: Error, Equatable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
  }

  /// True when `name` matches one of the comma-separated `filter` terms: a case-insensitive
  /// substring, or a glob when the term has `*` or `?`. An empty filter matches everything.
  public static func matches(_ name: String, filter: String) -> Bool {
    let terms = filter.split(separator: ",").map { $0.trimmingCharacters() }.filter { !$0.isEmpty }
    if terms.isEmpty { return true }
    let lowered = name.lowercased()
    return terms.contains { term in
      let t = term.lowercased()
      if t.contains("*") || t.contains("?") { return glob(Array(t), Array(lowered)) }
      return lowered.contains(t)
    }
  }

  /// Filters, then keeps this shard's part. Sharding is round-robin over names in sorted order,
  /// so every scenario lands in exactly one shard whatever order the files were listed in.
  public static func select(_ scenarios: [Scenario], filter: String? = nil, shard: Shard? = nil)
    -> [Scenario]
  {
    let filtered = scenarios.filter { scenario in
      filter.map { matches(scenario.name, filter: $0) } ?? true
    }
    guard let shard else { return filtered }
    let order = filtered.map(\.name).sorted()
    return filtered.filter { scenario in
      let position = order.firstIndex(of: scenario.name)!
      return position % shard.count == shard.index - 1
    }
  }

  static func glob(_ pattern: [Character], _ text: [Character]) -> Bool {
    // Iterative matcher with single-star backtracking: linear in practice, never exponential.
    var p = 0
    var t = 0
    var star = -1
    var mark = 0
    while t < text.count {
      if p < pattern.count, pattern[p] == "?" || pattern[p] == text[t] {
        p += 1
        t += 1
      } else if p < pattern.count, pattern[p] == "*" {
        star = p
        mark = t
        p += 1
      } else if star >= 0 {
        p = star + 1
        mark += 1
        t = mark
      } else {
        return false
      }
    }
    while p < pattern.count, pattern[p] == "*" { p += 1 }
    return p == pattern.count
  }
}

extension Substring {
  fileprivate func trimmingCharacters() -> String {
    String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
  }
}
