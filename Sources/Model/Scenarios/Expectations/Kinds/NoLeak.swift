extension ScenarioExpectation {
  /// Nothing left the device outside Tor, except what the user chose (exposure).
  public struct NoLeak: ExpectationUnit {
    public static let name = "no-leak"

    public init() {}

    public static func parse(_ input: ExpectationInput) throws(ScenarioError) -> Self { Self() }

    public func judge(_ facts: ExpectationFacts) -> ExpectationCheck {
      if !facts.leaks.isEmpty {
        return (.failed, facts.leaks.map(ExpectationJudge.describe).joined(separator: "; "))
      }
      if facts.captureInconclusive { return facts.undecided("no leak seen") }
      return (
        .met,
        facts.exposure.isEmpty
          ? "no packet outside Tor"
          : "no leak; \(facts.exposure.count) flow(s) by the user's choice reported as exposure"
      )
    }

    public var sentence: String { "no leak" }
  }
}
