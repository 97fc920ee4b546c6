extension ScenarioExpectation {
  /// Real-Tor lane: tor's bootstrap reached `progress`; at 100 a fetch through the exit must
  /// also succeed (100% does not by itself prove a usable circuit).
  public struct BootstrapReaches: ExpectationUnit {
    public static let name = "bootstrap-reaches"
    public static let fields = ["progress"]
    public static let realTorOnly = true
    public var progress: Int

    public init(progress: Int) { self.progress = progress }

    public static func parse(_ input: ExpectationInput) throws(ScenarioError) -> Self {
      Self(
        progress: try input.reader.integer(
          "progress", in: 0...100, "a bootstrap percentage", required: true)!)
    }

    public func judge(_ facts: ExpectationFacts) -> ExpectationCheck {
      let furthest = facts.torTimeline.furthestBootstrap
      guard let furthest, furthest.progress! >= progress else {
        return (
          .failed,
          "tor's bootstrap stopped at "
            + (furthest.map(facts.describe) ?? "0% (no step reported)")
            + ", expected \(progress)%"
        )
      }
      let reached = facts.torTimeline.first { $0.isBootstrap && $0.progress! >= progress }!
      if progress >= 100 {
        let at = facts.seconds(reached.time)
        switch facts.outcome.fetchThroughExit {
        case true?:
          return (.met, "100% at \(at); a fetch through the exit succeeded")
        case false?:
          return (.failed, "100% at \(at), but no fetch through the exit succeeded")
        case nil:
          return (.failed, "100% at \(at), but no fetch through the exit was tried")
        }
      }
      return (.met, "reached " + facts.describe(reached))
    }

    public var sentence: String {
      "tor bootstraps to \(progress)%"
        + (progress >= 100 ? " and a fetch through the exit succeeds" : "")
    }
  }
}
