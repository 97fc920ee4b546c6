import FailClosedSupport
import Scenarios

/// A black box on the mock lane (`leak-audit --app -- CMD`): the mock lane's sandbox, censor,
/// mock Tor (the program's personality) and capture, with the program started in the device by
/// `failclosed program-launch`. A program reads the wall clock: its scenarios run in real time.
public struct ProgramMockLane: Lane {
  public var mock: MockLane

  public init(mock: MockLane) {
    var mock = mock
    mock.timeScale = 1
    self.mock = mock
  }

  public func begin(_ scenario: Scenario) throws -> any LaneRun {
    guard let program = scenario.app.program else {
      throw ScenarioError(
        file: scenario.path, path: "app.program",
        message: "a program scenario needs its command: leak-audit --app -- CMD, or app.program")
    }
    return try ProgramMockLaneRun(scenario, lane: mock, program: program)
  }
}

final class ProgramMockLaneRun: MockLaneRun {
  let program: ProgramSpec

  init(_ scenario: Scenario, lane: MockLane, program: ProgramSpec) throws {
    self.program = program
    try super.init(scenario, lane: lane)
  }

  /// The program keeps the wall clock from its own start; the mock keeps its own.
  override var clockSharing: RunClockSharing { .own }

  override func appCommand(actionsFile: String, stateDirectory: String) -> [String] {
    ScenarioCommandLines.programLaunch(
      program, scenario: scenario, executable: lane.executable, workDirectory: workDirectory,
      bootstrapLog: workDirectory + "/mock.jsonl")
  }
}
