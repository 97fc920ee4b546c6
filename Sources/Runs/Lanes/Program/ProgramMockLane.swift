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
    ProgramMockLaneRun.launchCommand(
      program, scenario: scenario, executable: lane.executable, workDirectory: workDirectory,
      bootstrapLog: workDirectory + "/mock.jsonl")
  }

  /// `failclosed program-launch` for `program` in `scenario`: started at the scenario's
  /// `start` action (or once `bootstrapLog`, the Tor side's log, says 100%), stopped at its end.
  static func launchCommand(
    _ program: ProgramSpec, scenario: Scenario, executable: String, workDirectory: String,
    bootstrapLog: String
  ) -> [String] {
    let startAt = scenario.app.actions.first { $0.step == .start }?.at ?? 0
    var command = [
      executable, "program-launch", "--duration", String(scenario.duration),
      "--start-at", String(startAt), "--output", workDirectory + "/program.out",
    ]
    if program.start == .afterBootstrap {
      command += ["--after-bootstrap", bootstrapLog]
    }
    for (key, value) in program.environment.sorted(by: { $0.key < $1.key }) {
      command += ["--env", "\(key)=\(value)"]
    }
    if let directory = program.workingDirectory { command += ["--cwd", directory] }
    if let file = program.success.file { command += ["--success-file", file] }
    return command + ["--"] + program.arguments
  }
}
