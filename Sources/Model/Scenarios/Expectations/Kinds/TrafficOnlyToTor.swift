import Audit

extension ScenarioExpectation {
  /// Every packet went to an allowed Tor address: no leak and no exposure either.
  public struct TrafficOnlyToTor: ExpectationUnit {
    public static let name = "traffic-only-to-tor"

    public init() {}

    public static func parse(_ input: ExpectationInput) throws(ScenarioError) -> Self { Self() }

    public func judge(_ facts: ExpectationFacts) -> ExpectationCheck {
      let others = (facts.leaks + facts.exposure)
      if !others.isEmpty {
        return (.failed, others.map(ExpectationJudge.describe).joined(separator: "; "))
      }
      // Packets of a leak class, even beyond the audit's cap on listed leaks.
      let leakClasses = Set(LeakClass.allCases.map(\.rawValue))
      let stray = facts.outcome.audit.traffic.filter {
        $0.packets > 0 && leakClasses.contains($0.trafficClass)
      }
      if let first = stray.first {
        return (.failed, "\(first.trafficClass) packets at \(facts.seconds(first.time))")
      }
      if facts.captureInconclusive { return facts.undecided("only Tor traffic seen") }
      return (.met, "every packet went to an allowed Tor address")
    }

    public var sentence: String { "traffic only to Tor" }
  }
}
