extension ScenarioExpectation {
  /// Real-Tor lane, a replayed measurement: probed from the device before the app starts,
  /// `reachable` of the class's nodes answer; with `failure`, every other one fails so
  /// (OONI's failure names). `measured`: what the measurement recorded, for the report.
  public struct Reachability: ExpectationUnit {
    public static let name = "reachability"
    public static let fields = ["targets", "reachable", "failure", "measured"]
    public static let realTorOnly = true
    public var targets: RealTorTargetClass
    public var reachable: Int
    public var failure: String?
    public var measured: String?

    public init(targets: RealTorTargetClass, reachable: Int, failure: String?, measured: String?) {
      self.targets = targets
      self.reachable = reachable
      self.failure = failure
      self.measured = measured
    }

    public static func parse(_ input: ExpectationInput) throws(ScenarioError) -> Self {
      let r = input.reader
      let targets = RealTorTargetClass(
        rawValue: try r.oneOf("targets", RealTorTargetClass.allCases.map(\.rawValue))!)!
      return Self(
        targets: targets,
        reachable: try r.integer(
          "reachable", in: 0...targets.nodes.count,
          "a number of nodes (the class has \(targets.nodes.count))", required: true)!,
        failure: try r.string("failure", required: false),
        measured: try r.string("measured", required: false))
    }

    public func judge(_ facts: ExpectationFacts) -> ExpectationCheck {
      let measuredText = measured.map { "measured \($0)" } ?? "planned"
      guard let probed = facts.outcome.reachability else {
        return (.failed, "\(measuredText); the nodes were not probed in the sandbox")
      }
      let mine = probed.filter { $0.targetClass == targets }
      guard mine.count == targets.nodes.count else {
        return (
          .failed,
          "\(measuredText); \(mine.count) of \(targets.nodes.count) \(targets.rawValue) probed"
        )
      }
      let ok = mine.filter { $0.failure == nil }.count
      let failures = mine.compactMap { $0.failure }
      let sandbox =
        "sandbox \(ok)/\(mine.count) reachable"
        + (failures.isEmpty ? "" : " (" + ExpectationJudge.tally(failures) + ")")
      let planned = "planned \(reachable)/\(mine.count)" + (failure.map { " \($0)" } ?? "")
      if ok != reachable {
        return (.failed, "\(measuredText); \(planned); \(sandbox)")
      }
      if let failure, failures.contains(where: { $0 != failure }) {
        return (.failed, "\(measuredText); \(planned); \(sandbox)")
      }
      return (.met, "\(measuredText); \(sandbox)")
    }

    public var sentence: String {
      "\(reachable) of \(targets.nodes.count) \(targets.rawValue) reachable"
        + (failure.map { ", the others fail with \($0)" } ?? "")
        + (measured.map { " (measured: \($0))" } ?? "")
    }
  }
}
