extension ScenarioExpectation {
  /// Real-Tor lane: tor bootstrapped through the pluggable transport (conn_pt/conn_done_pt).
  public struct BootstrapThroughBridge: ExpectationUnit {
    public static let name = "bootstrap-through-bridge"
    public static let realTorOnly = true

    public init() {}

    public static func parse(_ input: ExpectationInput) throws(ScenarioError) -> Self { Self() }

    public func judge(_ facts: ExpectationFacts) -> ExpectationCheck {
      if let step = facts.torTimeline.first(where: {
        $0.isBootstrap && ($0.tag?.hasSuffix("_pt") ?? false)
      }) {
        return (.met, "through the pluggable transport: " + facts.describe(step))
      }
      return (.failed, "no bootstrap step through the pluggable transport (conn_pt, conn_done_pt)")
    }

    public var sentence: String { "tor bootstraps through the pluggable transport" }
  }
}
