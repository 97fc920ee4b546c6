extension ScenarioExpectation {
  /// A notification was not posted before a time (nil: during the whole run).
  public struct NoNotification: ExpectationUnit {
    public static let name = "no-notification"
    public static let fields = ["name", "before"]
    public var name: String
    public var before: Double?

    public init(name: String, before: Double?) {
      self.name = name
      self.before = before
    }

    public static func parse(_ input: ExpectationInput) throws(ScenarioError) -> Self {
      Self(
        name: try input.reader.oneOf("name", ScenarioParser.notificationNames)!,
        before: try input.time("before"))
    }

    public func judge(_ facts: ExpectationFacts) -> ExpectationCheck {
      let hit = facts.events.first { event in
        event.name == name && (before.map { event.time < $0 } ?? true)
      }
      if let hit { return (.failed, "\(name) posted at \(facts.seconds(hit.time))") }
      return (.met, "\(name) not posted" + (before.map { " before \(facts.seconds($0))" } ?? ""))
    }

    public var sentence: String {
      "\(name) not posted" + (before.map { " before \(formatSeconds($0))" } ?? "")
    }
  }
}
