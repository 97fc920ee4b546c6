extension ScenarioExpectation {
  /// The program did what its success says (exit status, a line of output, a file), by the
  /// end of the run: the positive control of a black box, when Tor works.
  public struct ProgramSucceeds: ExpectationUnit {
    public static let name = "program-succeeds"
    public static let fields = ["exit", "output", "file"]
    /// nil: the program profile's success.
    public var success: ProgramSpec.Success?

    public init(success: ProgramSpec.Success? = nil) { self.success = success }

    public static func parse(_ input: ExpectationInput) throws(ScenarioError) -> Self {
      Self(success: try ProgramSpecParser.success(input.reader))
    }

    public func judge(_ facts: ExpectationFacts) -> ExpectationCheck {
      let run = ProgramRun(facts.events)
      let success = facts.success(overriding: self.success)
      guard let missing = run.shortfall(of: success) else { return (.inconclusive, run.notStarted) }
      guard missing.isEmpty else { return (.failed, missing.joined(separator: "; ")) }
      return (.met, "\(success.sentence): \(run.ending)")
    }

    public var sentence: String {
      "the program succeeds" + (success.map { " (\($0.sentence))" } ?? "")
    }
  }
}
