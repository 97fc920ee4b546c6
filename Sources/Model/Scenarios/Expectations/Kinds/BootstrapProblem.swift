extension ScenarioExpectation {
  /// Real-Tor lane: tor reported a bootstrap problem with this reason (CONNECTREFUSED, TIMEOUT,
  /// DONE, IOERROR, ...).
  public struct BootstrapProblem: ExpectationUnit {
    public static let name = "bootstrap-problem"
    public static let fields = ["reason"]
    public static let realTorOnly = true
    public var reason: String

    public init(reason: String) { self.reason = reason }

    public static func parse(_ input: ExpectationInput) throws(ScenarioError) -> Self {
      Self(reason: try input.reader.oneOf("reason", ScenarioParser.bootstrapProblemReasons)!)
    }

    public func judge(_ facts: ExpectationFacts) -> ExpectationCheck {
      let timeline = facts.torTimeline
      if let hit = timeline.first(where: { $0.isProblem && $0.reason == reason }) {
        let source = hit.source == .log ? " in tor's log" : ""
        return (
          .met,
          "\(reason) at \(facts.seconds(hit.time))\(source)"
            + (hit.count.map { " (count \($0))" } ?? "")
        )
      }
      let seen = Set(timeline.filter(\.isProblem).compactMap(\.reason)).sorted()
      return (
        .failed,
        "tor reported no \(reason) problem"
          + (seen.isEmpty ? "" : " (only \(seen.joined(separator: ", ")))")
      )
    }

    public var sentence: String { "tor reports a bootstrap problem \(reason)" }
  }
}
