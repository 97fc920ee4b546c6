import Foundation
import Lanes
import Scenarios
import Testing
import Vocabulary

@testable import FailClosedCLI

/// A system under test is one entry in Lanes' registry (TestedSystems): `--sut` looks it up
/// there, and the plan the commands run comes from the entry. A trivial system added in a test
/// is chosen by name and runs what it adopts; the registry's own two keep their rules.
struct SystemUnderTestRegistryTests {
  /// Onion Browser's profiles only, made ready with nothing.
  static let onionOnly = TestedSystem(
    name: "onion-only", summary: "a test's trivial system",
    refusal: "is not an onion-browser scenario",
    adopt: { $0.app.profile.isOnionBrowser ? $0 : nil },
    prepare: { scenarios, _ in TestedSystemSetup(scenarios: scenarios) })

  static func arguments(_ words: [String]) throws -> ParsedArguments {
    try ArgumentParser.parse(words, options: LeakAuditCommand().options)
  }

  static func library() -> [Scenario] {
    ScenarioLoader.load([RepositoryFiles.root + "/Scenarios"]).compactMap { try? $0.result.get() }
  }

  @Test func aSystemAddedToTheListIsChosenByNameAndRunsWhatItAdopts() throws {
    let systems = TestedSystems.all + [Self.onionOnly]
    let chosen = try SystemUnderTestOption.system(
      Self.arguments(["--sut", "onion-only"]), in: systems)
    #expect(chosen.name == "onion-only")
    let library = Self.library()
    let plan = TestedSystems.plan(
      library, on: chosen, inputs: TestedSystemInputs(progress: { _ in }))
    #expect(!plan.scenarios.isEmpty)
    #expect(plan.scenarios.allSatisfy { $0.app.profile.isOnionBrowser })
    #expect(plan.scenarios.count == library.filter { $0.app.profile.isOnionBrowser }.count)
    #expect(plan.unavailable == nil && plan.bitchatSourceDriver == nil)
  }

  @Test func leakAuditTakesSeveralSystemsInOrderEachOnce() throws {
    let both = try SystemUnderTestOption.systems(
      Self.arguments(["--sut", "model,bitchat-source"]))
    #expect(both.map(\.name) == ["model", "bitchat-source"])
    #expect(both.map(\.waitsInRealTime) == [false, true])
    #expect(try SystemUnderTestOption.systems(Self.arguments([])).map(\.name) == ["model"])
    #expect(throws: UsageError("--sut: 'model' is named twice")) {
      try SystemUnderTestOption.systems(Self.arguments(["--sut", "model,model"]))
    }
    #expect(
      throws: UsageError(
        "--sut: expected names among model, bitchat-source, program, onion-browser-source separated by commas, got 'modle'"
      )
    ) {
      try SystemUnderTestOption.systems(Self.arguments(["--sut", "model,modle"]))
    }
  }

  @Test func aNameNotInTheListIsAUsageErrorNamingTheSystems() throws {
    #expect(
      throws: UsageError(
        "--sut: expected model or bitchat-source or program or onion-browser-source, got 'onion-only'"
      )
    ) {
      try SystemUnderTestOption.system(Self.arguments(["--sut", "onion-only"]))
    }
    #expect(
      throws: UsageError(
        "--bitchat-src /x is an option of bitchat-source; it contradicts --sut model (name "
          + "bitchat-source there, or leave the option out)")
    ) {
      try SystemUnderTestOption.system(Self.arguments(["--sut", "model", "--bitchat-src", "/x"]))
    }
    #expect(
      try SystemUnderTestOption.system(Self.arguments(["--bitchat-src", "/x"])).name
        == "bitchat-source")
    #expect(try SystemUnderTestOption.system(Self.arguments([])).name == "model")
  }

  /// bitchat-source adopts the bitchat scenarios bitchat's code can run (arti on the mock
  /// lane, the real lane's), as bitchat-source files, and the naive-port canary on stock
  /// Foundation; the model keeps every file as written.
  @Test func theRegisteredSystemsAdoptByTheirOneRule() {
    let library = Self.library()
    let source = library.compactMap(BitchatSourceSystem.entry.adopt)
    #expect(!source.isEmpty)
    for scenario in source {
      #expect([.bitchatSource, .naivePort].contains(scenario.app.profile), "\(scenario.name)")
      #expect(
        BitchatSourceSystem.transport(for: scenario, substituting: true) != nil, "\(scenario.name)")
      if scenario.lane == .mock { #expect(scenario.tor.mock?.personality == .arti) }
    }
    #expect(!source.contains { $0.app.profile.isOnionBrowser || $0.app.profile == .hardened })
    #expect(library.compactMap(ModelSystem.entry.adopt) == library)
    #expect(
      SystemUnderTestOption.spec().values
        == .words(["model", "bitchat-source", "program", "onion-browser-source"]))
    // onion-browser-source takes the Onion Browser 2.X and 3.X files its code can run (the
    // ctor personality on the mock lane, the real lane's), as written; without a checkout it
    // runs none and says why, without ending the run.
    let onion = library.compactMap(OnionBrowserSourceSystem.entry.adopt)
    #expect(!onion.isEmpty)
    #expect(
      onion.allSatisfy {
        [.onionBrowser2, .onionBrowser3, .onionBrowser].contains($0.app.profile)
          && ($0.lane == .realTor || $0.tor.mock?.personality == .ctor)
      })
    let none = TestedSystems.plan(
      library, on: OnionBrowserSourceSystem.entry, inputs: TestedSystemInputs(progress: { _ in }))
    #expect(none.scenarios.isEmpty)
    #expect(none.unavailable?.endsRun == false)
    #expect(none.unavailable?.reason.contains("--onion-browser-src") == true)
    // The program system takes the black-box files only; the model none of them.
    let programs = ScenarioLoader.load([RepositoryFiles.root + "/Scenarios/program"]).compactMap {
      try? $0.result.get()
    }
    #expect(programs.count >= 10)
    #expect(programs.compactMap(ProgramSystem.entry.adopt) == programs)
    #expect(programs.compactMap(ModelSystem.entry.adopt).isEmpty)
    #expect(library.compactMap(ProgramSystem.entry.adopt).isEmpty)
    // Each program's Tor is on one lane: the mock's for ctor and arti, the real lane's for
    // Debian's tor; the command line's program is put into every file, its personality too.
    func planned(_ tor: ProgramSpec.Tor) -> [Scenario] {
      TestedSystems.plan(
        programs, on: ProgramSystem.entry,
        inputs: TestedSystemInputs(
          program: ProgramSpec(arguments: ["/bin/true"], tor: tor), progress: { _ in })
      ).scenarios
    }
    let onMock = planned(.arti)
    #expect(!onMock.isEmpty && onMock.allSatisfy { $0.lane == .mock })
    #expect(onMock.allSatisfy { $0.tor.mock?.personality == .arti })
    #expect(onMock.allSatisfy { $0.app.program?.arguments == ["/bin/true"] })
    let onReal = planned(.debian)
    #expect(!onReal.isEmpty && onReal.allSatisfy { $0.lane == .realTor })
    #expect(onMock.count + onReal.count == programs.count)
  }

  /// `--help` reads the lists: every verb, censor action and system is named where a user
  /// looks, and nothing else is.
  @Test func theHelpTextsListTheRegisteredNames() {
    let app = AppCommand().usage
    for verb in ActionVerbs.all {
      #expect(app.contains(verb.name) || !verb.inActionsFiles, "app --help: \(verb.name)")
    }
    let check = CheckCommand().usage
    let verbs = ActionVerbs.scenarioNames().joined(separator: ", ")
    #expect(check.contains("Action verbs: \(verbs)."))
    #expect(check.contains(CensorAction.scenarioRules.map(\.rawValue).joined(separator: ", ")))
    #expect(
      LeakAuditCommand().usage.contains(
        "[--sut model|bitchat-source|program|onion-browser-source[,...]]"))
    #expect(
      ReplayCommand().usage.contains("[--sut model|bitchat-source|program|onion-browser-source]"))
  }
}
