extension ScenarioExpectation {
  /// Direct traffic happened while the user had turned Tor off, and it is reported as the
  /// user's choice (exposure), not as a leak.
  public struct ClearnetByUserChoice: ExpectationUnit {
    public static let name = "clearnet-by-user-choice"

    public init() {}

    public static func parse(_ input: ExpectationInput) throws(ScenarioError) -> Self { Self() }

    public func judge(_ facts: ExpectationFacts) -> ExpectationCheck {
      if !facts.exposure.isEmpty {
        return (
          .met,
          "\(facts.exposure.count) flow(s) while Tor was off, reported as exposure: "
            + facts.exposure.map(ExpectationJudge.describe).joined(separator: "; ")
        )
      }
      if facts.captureInconclusive { return facts.undecided("no direct traffic seen") }
      return (.failed, "no direct traffic was seen while the Tor preference was off")
    }

    public var sentence: String { "clearnet by the user's choice, reported as exposure" }
  }
}
