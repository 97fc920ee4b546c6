extension ScenarioExpectation {
  /// No event matching a pattern happened before a time (nil: during the whole run).
  public struct NoEvent: ExpectationUnit {
    public static let name = "no-event"
    public static let fields = ["event", "before"]
    public var pattern: String
    public var before: Double?

    public init(_ pattern: String, before: Double?) {
      self.pattern = pattern
      self.before = before
    }

    public static func parse(_ input: ExpectationInput) throws(ScenarioError) -> Self {
      Self(try input.pattern("event"), before: try input.time("before"))
    }

    public func judge(_ facts: ExpectationFacts) -> ExpectationCheck {
      let pattern = EventPattern(self.pattern)
      let hit = facts.events.first { event in
        pattern.matches(event) && (before.map { event.time < $0 } ?? true)
      }
      if let hit { return (.failed, "\"\(pattern)\" at \(facts.seconds(hit.time))") }
      return (.met, "no \"\(pattern)\"" + (before.map { " before \(facts.seconds($0))" } ?? ""))
    }

    public var sentence: String {
      "no \"\(pattern)\"" + (before.map { " before \(formatSeconds($0))" } ?? "")
    }
  }
}
