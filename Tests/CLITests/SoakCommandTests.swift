import FailClosedSupport
import Scenarios
import Testing

@testable import FailClosedCLI

/// `failclosed soak`'s bounds and its help, without root: every refusal comes before anything
/// runs.
@Suite struct SoakCommandTests {
  @Test func outOfBoundsAndNothingToRunAreUsageErrors() async {
    for arguments in [
      ["soak", "--mock", "1001"], ["soak", "--real", "101"], ["soak", "--exec", "-1"],
      ["soak", "--max-minutes", "0"], ["soak", "--max-minutes", "601"],
      ["soak", "--mock", "0", "--real", "0", "--exec", "0"],
      ["soak", "--canary-leak", "socket"],
    ] {
      #expect(await FailClosedMain.run(arguments) == ExitCode.usage, "\(arguments)")
    }
  }

  @Test func theHelpSaysWhatIsCountedAndTheGoals() {
    let help = SoakCommand().helpText
    for count in SoakCount.allCases { #expect(help.contains("  \(count.rawValue): ")) }
    #expect(help.contains("Defaults 500, 50 and 50; at most 1000, 100 and 100"))
    #expect(help.contains("--short: 12 mock, 2 real and 15 exec runs"))
    #expect(help.contains("Exit code: 0 every goal held, 5 one did not, 2 a setup error"))
    #expect(FailClosedMain.commands.contains { $0.name == "soak" })
  }

  @Test func theLibrariesGoRoundInNameOrder() throws {
    let scenarios = ScenarioLoader.load([
      RepositoryFiles.path("Scenarios"), RepositoryFiles.path("Scenarios/ooni"),
      RepositoryFiles.path("Scenarios/program"),
    ]).compactMap { try? $0.result.get() }
    let mock = SoakPlan.mockLibrary(scenarios, filter: nil)
    #expect(mock.count >= 30)
    #expect(mock.allSatisfy { $0.lane == .mock && $0.app.profile != .program })
    #expect(mock.map(\.name) == mock.map(\.name).sorted())
    let real = SoakPlan.realLibrary(scenarios, filter: nil)
    #expect(!real.isEmpty)
    #expect(real.allSatisfy { $0.lane == .realTor && $0.duration <= SoakPlan.realDurationLimit })
    // No program file (it needs a command), nothing over 30 s.
    #expect(!real.contains { $0.app.profile == .program })
    #expect(!real.contains { $0.name == "real-bridge-around-block-bitchat" })
    #expect(SoakPlan.scenario(run: 1, of: mock).name == mock[0].name)
    #expect(SoakPlan.scenario(run: mock.count + 2, of: mock).name == mock[1].name)
    #expect(
      SoakPlan.mockLibrary(scenarios, filter: "healthy-baseline").map(\.name) == [
        "healthy-baseline"
      ])
  }
}
