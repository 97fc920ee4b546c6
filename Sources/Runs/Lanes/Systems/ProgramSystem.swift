import Scenarios

/// Any program as a black box (`leak-audit --app -- CMD`, `--app-profile FILE`): the library's
/// program scenarios (Scenarios/program), each given the command and the Tor it asks for, on
/// the mock lane in real time (ProgramMockLane).
public enum ProgramSystem {
  public static let entry = TestedSystem(
    name: "program",
    summary: "any program as a black box (--app -- CMD), on the program scenarios",
    refusal: "is not a program scenario (\"profile\": \"program\", Scenarios/program)",
    waitsInRealTime: true,
    adopt: { $0.app.profile == .program ? $0 : nil },
    prepare: { scenarios, inputs in
      // Each program's Tor is on one lane: the mock's personalities, or Debian's tor on the
      // private network; the files of the other lane do not apply to it.
      let given = scenarios.map { with(inputs.program, $0) }.filter { scenario in
        scenario.app.program.map { $0.lane == scenario.lane } ?? true
      }
      let runnable = given.filter { $0.app.program != nil }
      guard runnable.count == given.count else {
        return TestedSystemSetup(
          scenarios: runnable,
          unavailable: (
            "no command for \(given.count - runnable.count) program scenario(s): "
              + "give one with --app -- CMD (or app.program in the file)", endsRun: true
          ))
      }
      return TestedSystemSetup(scenarios: runnable)
    })

  /// `scenario` with `program` (the command line's, which wins over the file's) and the mock
  /// personality that program's Tor is.
  public static func with(_ program: ProgramSpec?, _ scenario: Scenario) -> Scenario {
    var scenario = scenario
    if let program { scenario.app.program = program }
    if let personality = scenario.app.program?.personality, case .mock(var plan) = scenario.tor {
      plan.personality = personality
      scenario.tor = .mock(plan)
    }
    return scenario
  }
}
