extension ScenarioExpectation {
  /// An event matching a pattern ("relay-rejected reason=limitReached") happened by a time;
  /// with `count`, exactly that many times.
  public struct Event: ExpectationUnit {
    public static let name = "event"
    public static let fields = ["event", "by", "count"]
    public var pattern: String
    public var by: Double
    public var count: Int?

    public init(_ pattern: String, by: Double, count: Int?) {
      self.pattern = pattern
      self.by = by
      self.count = count
    }

    public static func parse(_ input: ExpectationInput) throws(ScenarioError) -> Self {
      Self(
        try input.pattern("event"), by: try input.time("by", required: true)!,
        count: try input.reader.integer("count", in: 0...1000, "a number of times"))
    }

    public func judge(_ facts: ExpectationFacts) -> ExpectationCheck {
      let pattern = EventPattern(self.pattern)
      let times = facts.events.filter { pattern.matches($0) }.map(\.time)
      guard let first = times.first else { return (.failed, "no \"\(pattern)\" event") }
      if first > facts.deadline(by) {
        return (
          .failed,
          "first \"\(pattern)\" at \(facts.seconds(first)), after \(facts.seconds(by))"
            + facts.driftNote(by)
        )
      }
      if let count, times.count != count {
        let list = times.map(facts.seconds).joined(separator: ", ")
        return (.failed, "\"\(pattern)\" \(times.count) times (at \(list)), expected \(count)")
      }
      return (.met, "\"\(pattern)\" at \(facts.seconds(first))")
    }

    public var sentence: String {
      let times = count.map { " exactly \($0) time\($0 == 1 ? "" : "s")" } ?? ""
      return "\"\(pattern)\" seen\(times) by \(formatSeconds(by))"
    }
  }
}
