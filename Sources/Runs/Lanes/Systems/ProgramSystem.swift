import Scenarios

/// Any program as a black box (`leak-audit --app -- CMD`, `--app-profile FILE`): the library's
/// program scenarios (Scenarios/program), each given the command and the Tor it asks for, on
/// the mock lane in real time (ProgramMockLane).
public enum ProgramSystem {
  public static let entry = TestedSystem(
    name: "program",
    summary: "any program as a black box (--app -- CMD), on the program scenarios",
    refusal: "is not a program scenario (\"profile\": \"program\", Scenarios/program)",
    guide: """
      --app -- CMD ARGS: any program as a black box. Every scenario of Scenarios/program (or
      the PATHs) runs against CMD on the mock lane in real time, all at once: Tor healthy (the
      positive control: CMD must succeed), blocked, stalled at handshake, circuit_create and
      loading_descriptors, disabled, crashed before CMD's request, flapping, DNS poisoned at the
      censor, TLS dropped by size, connections reset. CMD runs in the device with the mock Tor's
      SOCKS port on 127.0.0.1:39050 (control port 39051), stdin from /dev/null, and is stopped at
      the scenario's end. Each is judged from the capture (no-leak: any packet outside Tor, a
      local DNS question included) and from what is seen of CMD from outside: program-succeeds
      (by default exit 0) and fails-closed (while Tor cannot carry it, CMD fails or waits; a
      success went around Tor). --app-profile FILE (JSON) sets argv (the command after -- wins),
      env, cwd, tor (ctor, the default: SOCKS open and requests held; arti: SOCKS only once
      bootstrapped; debian: Debian's tor in the device on the private Tor network, the real-Tor
      lane's program-real-* files), start (with-tor, or after-bootstrap) and success ({"exit": 0,
      "output": "REGEX", "file": "PATH"}); docs/programs.md. A CMD not found is a usage error.
      """,
    options: [command, profile],
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

  /// `--app`: the command after `--` is the system under test.
  public static let command = TestedSystemOption(
    "app", help: "the system under test is the command after --", value: .flag)
  /// `--app-profile FILE`: the program's argv, environment, Tor and success (docs/programs.md).
  public static let profile = TestedSystemOption(
    "app-profile", valueName: "FILE",
    help: "the program's argv, env, cwd, Tor (ctor|arti|debian), start and success (JSON)",
    value: .file)

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
