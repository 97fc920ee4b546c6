import Lanes
import Scenarios

/// One system under test of a leak-audit run, made ready: its scenarios by lane, where its
/// reports go, its runner, and how many of its scenarios run side by side on each lane.
struct PlannedSystem: Sendable {
  let system: TestedSystem
  let setup: TestedSystemSetup
  let selected: [Scenario]
  let directory: String
  let runner: ScenarioRunner
  let mockJobs: Int
  let realJobs: Int

  var mockLane: [Scenario] { selected.filter { $0.lane == .mock } }
  var realLane: [Scenario] { selected.filter { $0.lane == .realTor } }

  /// When a lane ran, in real seconds since the runs began.
  struct LaneTime: Sendable {
    var lane: String
    var from: Double
    var to: Double
    /// "19.7 s (0.0-19.7 s)".
    var text: String {
      func s(_ v: Double) -> String { String(format: "%.1f", v) }
      return "\(s(to - from)) s (\(s(from))-\(s(to)) s)"
    }
  }

  /// What the system's lanes gave.
  struct Outcome: Sendable {
    var results: [ScenarioResult]
    var networkReadySeconds: Double?
    var lanes: [LaneTime] = []
    var verdict: ScenarioVerdict { results.map(\.verdict).max() ?? .inconclusive }
  }

  init(
    system: TestedSystem, setup: TestedSystemSetup, selected: [Scenario], directory: String,
    runner: ScenarioRunner, requestedJobs: Int?
  ) {
    self.system = system
    self.setup = setup
    self.selected = selected
    self.directory = directory
    self.runner = runner
    let mock = selected.filter { $0.lane == .mock }.count
    let real = selected.filter { $0.lane == .realTor }.count
    let realTime = system.waitsInRealTime
    mockJobs =
      requestedJobs ?? ScenarioJobs.defaultCount(waitsInRealTime: realTime, scenarios: mock)
    realJobs = min(
      requestedJobs ?? ScenarioJobs.defaultCount(waitsInRealTime: realTime, scenarios: real),
      max(real, 1))
  }

  /// The line leak-audit prints before the runs start.
  func announcement(scale: Int, prefix: Bool) -> String {
    let realTime = system.waitsInRealTime
    return (prefix ? "\(system.name): " : "failclosed leak-audit: ")
      + "\(selected.count) scenarios: \(mockLane.count) on the mock lane, \(mockJobs) at a time, "
      + "time x\(realTime ? 1 : scale); \(realLane.count) on the real-Tor lane, \(realJobs) at a "
      + "time" + (realTime ? "; both lanes side by side" : "")
  }
}
