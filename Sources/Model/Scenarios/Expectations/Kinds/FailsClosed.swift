extension ScenarioExpectation {
  /// While Tor cannot carry it, the program's request fails or waits: it did not succeed (by
  /// its profile's success) before the run ended. With `no-leak`, that is failing closed: a
  /// success here went some other way than Tor, and a leak is what the capture shows of it.
  public struct FailsClosed: ExpectationUnit {
    public static let name = "fails-closed"

    public init() {}

    public static func parse(_ input: ExpectationInput) throws(ScenarioError) -> Self { Self() }

    public func judge(_ facts: ExpectationFacts) -> ExpectationCheck {
      let run = ProgramRun(facts.events)
      let success = facts.success(overriding: nil)
      guard let missing = run.shortfall(of: success) else { return (.inconclusive, run.notStarted) }
      guard !missing.isEmpty else {
        return (
          .failed,
          "it succeeded (\(success.sentence): \(run.ending)) although Tor could not carry it"
        )
      }
      return (
        .met, (run.exit == nil ? "it waited: " : "it failed: ") + missing.joined(separator: "; ")
      )
    }

    public var sentence: String { "the program fails or waits, never succeeds around Tor" }
  }
}
