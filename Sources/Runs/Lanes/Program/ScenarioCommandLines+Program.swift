import Scenarios

extension ScenarioCommandLines {
  /// `failclosed program-launch` for `program` in `scenario`: started at the scenario's
  /// `start` action (or once `bootstrapLog`, the Tor side's log, says 100%), stopped at its end.
  static func programLaunch(
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
