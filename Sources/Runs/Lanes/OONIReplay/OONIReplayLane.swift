import Audit
import Sandbox
import Scenarios

/// A replayed OONI measurement (`failclosed ooni convert`, `replay --from-ooni`): the real-Tor
/// lane, with each node of the private network probed from the device as OONI probed its
/// targets, under the scenario's censor rules and before the capture opens (the probe is the
/// harness's traffic, not the app's); the results are judged by `reachability`.
public struct OONIReplayLane: Lane {
  public var real: RealTorLane

  public init(real: RealTorLane) { self.real = real }

  public func begin(_ scenario: Scenario) throws -> any LaneRun {
    try OONIReplayLaneRun(scenario, lane: real)
  }
}

final class OONIReplayLaneRun: RealTorLaneRun {
  private var reachability: [ReachabilityResult]?

  override func beforeCapture() throws {
    let nodes = RealTorTargetClass.allCases.flatMap { cls in
      cls.nodes.compactMap { name in targets.nodes[name].map { (name, cls, $0) } }
    }
    reachability = ReachabilityProbe.probe(nodes, in: sandbox.device)
  }

  override func complete(_ outcome: inout ScenarioOutcome) {
    super.complete(&outcome)
    outcome.reachability = reachability
  }
}
