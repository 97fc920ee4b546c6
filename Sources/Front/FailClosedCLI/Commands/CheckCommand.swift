import FailClosedSupport
import Foundation
import Lanes
import Reports
import Scenarios
import Vocabulary

/// `failclosed check FILE...`: validates scenario files without running them (no root): the
/// schema's rules, names (censor targets, event names and fields, plans), times against the
/// duration, and plan-vs-censor contradictions; the same checks leak-audit runs first. With
/// --mutate (root) each mock scenario runs once as written and once without its faults, and a
/// scenario whose verdict does not change is reported: it proves nothing about its faults.
public struct CheckCommand: Command {
  public init() {}
  public let name = "check"
  public let summary = "validate scenario files (no root); --mutate: prove their faults matter"
  public let usage = """
    Usage: failclosed check [PATH ...] [--mutate] [--jobs N] [--time-scale N]

    Validates each scenario file (PATH: files or directories, default Scenarios/) without
    running it and without root, for editors and pre-commit hooks: the fields and values the
    schema allows, every name (censor targets, event names and field keys in patterns, plans),
    every time against the duration, and a mock plan that contradicts the censor (a blocked
    guard with a plan that bootstraps). Each error names the file and the field, with a "did
    you mean" when a known name is close. leak-audit runs the same checks first.
    Action verbs: \(ActionVerbs.scenarioNames().joined(separator: ", ")).
    Censor actions: \(CensorAction.scenarioRules.map(\.rawValue).joined(separator: ", ")).

    --mutate (needs root) runs each mock-lane scenario that has faults (a bootstrap plan other
    than healthy, censor rules, DNS poisoning, stream faults, a crash) twice: as written, and
    without its faults. When the verdict is the same both times, the scenario proves nothing
    about its faults: its expectations are met whatever the faults do.
    Exit code: 0 all files valid (and, with --mutate, every verdict changes), 2 a file is
    invalid or a run inconclusive, 5 a scenario whose verdict does not change or that fails.
    """
  public let options: [OptionSpec] = [
    OptionSpec("mutate", .flag, help: "run each scenario with and without its faults (root)"),
    OptionSpec(
      "jobs", .single, valueName: "N",
      help: "scenarios run side by side \(ScenarioJobs.helpText)"),
    OptionSpec("time-scale", .single, valueName: "N", help: "virtual seconds per second (25)"),
  ]

  public func run(_ arguments: ParsedArguments) async throws -> Int32 {
    let paths = arguments.positional.isEmpty ? ["Scenarios"] : arguments.positional
    let mutate = arguments.has("mutate")
    let jobs =
      try arguments.integer("jobs", in: 1...ScenarioJobs.maximum) ?? ScenarioJobs.defaultCount
    let scale = try arguments.integer("time-scale", in: 1...1000) ?? 25
    if mutate, !Privilege.isRoot {
      throw UsageError(
        "check --mutate needs root (it runs each scenario in the sandbox); "
          + "without --mutate check needs none")
    }
    var scenarios: [Scenarios.Scenario] = []
    var invalid = 0
    for item in ScenarioLoader.load(paths) {
      switch item.result {
      case .success(let scenario):
        scenarios.append(scenario)
        print(
          "ok       \(item.file) (\(scenario.lane.rawValue), "
            + "\(scenario.expectations.count) expectations)")
      case .failure(let error):
        invalid += 1
        print("invalid  \(error)")
      }
    }
    print(
      "\(scenarios.count + invalid) files: \(scenarios.count) valid, \(invalid) invalid")
    guard mutate else { return invalid == 0 ? ExitCode.pass : ExitCode.usage }
    return max(
      invalid == 0 ? ExitCode.pass : ExitCode.usage,
      await Self.mutate(scenarios, jobs: jobs, timeScale: Double(scale)))
  }

  /// Runs each scenario with faults as written and without them; prints one line each.
  static func mutate(_ scenarios: [Scenarios.Scenario], jobs: Int, timeScale: Double) async
    -> Int32
  {
    var runs: [Scenarios.Scenario] = []
    var pairs: [(original: Scenarios.Scenario, mutant: Scenarios.Scenario)] = []
    for scenario in scenarios {
      if scenario.lane == .realTor {
        print("skipped  \(scenario.name): a real-tor scenario (not mutated: its faults are tor's)")
        continue
      }
      guard let mutant = ScenarioMutation.withoutFaults(scenario) else {
        print("no fault \(scenario.name): nothing to remove (its test is the app's actions)")
        continue
      }
      pairs.append((scenario, mutant))
      runs += [scenario, mutant]
    }
    guard !runs.isEmpty else { return ExitCode.pass }
    print("\nrunning \(pairs.count) scenarios with and without their faults (\(runs.count) runs)")
    let work = NSTemporaryDirectory() + "failclosed-check-\(getpid())"
    defer { try? FileManager.default.removeItem(atPath: work) }
    let runner = ScenarioRunner(
      options: ScenarioRunner.Options(
        executable: LeakAuditCommand.executablePath(), timeScale: timeScale))
    let results = await LeakAuditCommand.runAll(runs, runner: runner, jobs: jobs)
    var exitCode = ExitCode.pass
    print("")
    for (index, pair) in pairs.enumerated() {
      let original = results[2 * index]
      let mutant = results[2 * index + 1]
      let removed = ScenarioMutation.faults(of: pair.original).joined(separator: ", ")
      switch ScenarioMutation.finding(
        original: original.verdict, mutant: mutant.verdict,
        declaredSame: pair.original.sameWithoutFaults != nil)
      {
      case .sameAsDeclared(let verdict):
        print(
          "same     \(pair.original.name): \(TerminalFormat.label(verdict)) with and without "
            + "\(removed), as it declares: \(pair.original.sameWithoutFaults ?? "")")
      case .changesDespiteDeclaration(let from, let to):
        exitCode = max(exitCode, ExitCode.leak)
        print(
          "WARNING  \(pair.original.name): declares its verdict the same without its faults, "
            + "but it is \(TerminalFormat.label(from)) as written and \(TerminalFormat.label(to)) "
            + "without \(removed)")
      case .changes(let from, let to):
        print(
          "proves   \(pair.original.name): \(TerminalFormat.label(from)) as written, "
            + "\(TerminalFormat.label(to)) without \(removed)"
            + (mutant.judgement.reasons.first.map { " (\($0))" } ?? ""))
      case .unchanged(let verdict):
        exitCode = max(exitCode, ExitCode.leak)
        print(
          "WARNING  \(pair.original.name): \(TerminalFormat.label(verdict)) with and without "
            + "\(removed): its expectations do not depend on its faults, so it proves nothing "
            + "about them; add an expectation that only the fault makes true")
      case .originalFails(let verdict):
        exitCode = max(exitCode, ExitCode.leak)
        print(
          "FAILS    \(pair.original.name): \(TerminalFormat.label(verdict)) as written"
            + (original.judgement.reasons.first.map { " (\($0))" } ?? ""))
      case .inconclusive:
        if exitCode == ExitCode.pass { exitCode = ExitCode.inconclusive }
        print(
          "UNKNOWN  \(pair.original.name): the run without its faults was inconclusive"
            + (mutant.judgement.reasons.first.map { " (\($0))" } ?? ""))
      }
    }
    return exitCode
  }
}
