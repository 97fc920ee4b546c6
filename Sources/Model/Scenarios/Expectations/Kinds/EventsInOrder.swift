extension ScenarioExpectation {
  /// These events happened in this order (other events may come between).
  public struct EventsInOrder: ExpectationUnit {
    public static let name = "events-in-order"
    public static let fields = ["events"]
    public var events: [String]

    public init(_ events: [String]) { self.events = events }

    public static func parse(_ input: ExpectationInput) throws(ScenarioError) -> Self {
      var events: [String] = []
      for e in try input.reader.array("events", required: true, minCount: 2, "event names")! {
        guard case .string(let s) = e.value, !s.isEmpty else {
          throw ScenarioError(
            file: input.file, path: e.path,
            message: "expected an event name, got \(e.value.shortDescription)")
        }
        if let problem = ScenarioEventCatalogue.problem(in: EventPattern(s), profile: input.profile)
        {
          throw ScenarioError(file: input.file, path: e.path, message: problem)
        }
        events.append(s)
      }
      return Self(events)
    }

    public func judge(_ facts: ExpectationFacts) -> ExpectationCheck {
      let patterns = events.map(EventPattern.init)
      var index = 0
      var lastTime: Double?
      for event in facts.events where index < patterns.count && patterns[index].matches(event) {
        index += 1
        lastTime = event.time
      }
      if index == patterns.count {
        return (.met, "all \(patterns.count) in order, the last at \(facts.seconds(lastTime ?? 0))")
      }
      let after = lastTime.map { " after \(patterns[index - 1]) at \(facts.seconds($0))" } ?? ""
      return (
        .failed, "matched \(index) of \(patterns.count): no \"\(patterns[index])\"\(after)"
      )
    }

    public var sentence: String { "events in order: " + events.joined(separator: " -> ") }
  }
}
