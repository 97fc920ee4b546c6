import FailClosedSupport
import Foundation
import TestSupport
import Testing

@testable import Lanes
@testable import Scenarios

/// `failclosed check`: no root, every library file valid, a typo named by file and field.
@Suite struct CheckCommandTests {
  @Test func theLibraryChecksCleanWithoutRoot() throws {
    let files = try ScenarioLoader.scenarioFiles(in: scenariosDirectory)
    let (status, output) = try runTool(FailclosedBinary.path, ["check", scenariosDirectory])
    #expect(status == 0, "\(output)")
    #expect(output.contains("\(files.count) files: \(files.count) valid, 0 invalid"), "\(output)")
  }

  @Test func aTypoIsAnErrorNamingTheFileAndTheFieldAndTheOthersAreStillChecked() throws {
    let directory = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let good = try String(
      contentsOfFile: scenariosDirectory + "/relays-dropped-stall-at-conn.json", encoding: .utf8)
    try good.write(toFile: directory + "/good.json", atomically: true, encoding: .utf8)
    try good.replacingOccurrences(of: #""to": "tor-guards""#, with: #""to": "tor-guard""#)
      .write(toFile: directory + "/typo.json", atomically: true, encoding: .utf8)
    let (status, output) = try runTool(FailclosedBinary.path, ["check", directory])
    #expect(status == 2, "\(output)")
    #expect(
      output.contains(
        "invalid  \(directory)/typo.json: network.censor[0].to: \"tor-guard\" is not a target "
          + "of this sandbox (did you mean \"tor-guards\"?)"), "\(output)")
    #expect(output.contains("ok       \(directory)/good.json"), "\(output)")
    #expect(output.contains("2 files: 1 valid, 1 invalid"), "\(output)")
  }

  @Test func theMutantLeavesOutEveryFaultAndOnlyThem() throws {
    let scenario = try libraryScenario("relays-reset-connect-refused")
    let mutant = try #require(ScenarioMutation.withoutFaults(scenario))
    #expect(mutant.tor.mock?.bootstrap == "healthy:5")
    #expect(mutant.network == NetworkPlan())
    #expect(mutant.app == scenario.app)
    #expect(mutant.expectations == scenario.expectations)
    let crash = try libraryScenario("tor-crash-mid-session")
    let crashMutant = try #require(ScenarioMutation.withoutFaults(crash))
    #expect(crashMutant.tor.mock?.crashAt == nil)
    #expect(ScenarioMutation.withoutFaults(try libraryScenario("healthy-baseline")) == nil)
    #expect(
      ScenarioMutation.finding(original: .pass, mutant: .pass) == .unchanged(.pass))
    #expect(
      ScenarioMutation.finding(original: .pass, mutant: .pass, declaredSame: true)
        == .sameAsDeclared(.pass))
    #expect(
      ScenarioMutation.finding(original: .pass, mutant: .failed)
        == .changes(from: .pass, to: .failed))
    #expect(ScenarioMutation.finding(original: .failed, mutant: .pass) == .originalFails(.failed))
  }
}

/// `check --mutate` for real (root): the library is held to it, and a scenario that proves
/// nothing is caught (the canary). In ScenarioRunnerTests' serialized suite, so these runs never
/// share the machine with the whole-library run (timing-sensitive deadlines).
extension ScenarioRunnerTests {
  /// Every mock library file with faults, run without them, must change its verdict (or keep
  /// it, if the file declares `sameWithoutFaults`). Its verdict as written is held to PASS by
  /// ScenarioRunnerTests.theWholeMockLibraryPassesThroughLeakAudit, so only the mutants run.
  @Test func everyLibraryScenarioWithFaultsFailsWithoutThem() async throws {
    var mutants: [(Scenario, Scenario)] = []
    for file in try ScenarioLoader.scenarioFiles(in: scenariosDirectory) {
      let scenario = try ScenarioLoader.loadFile(file).get()
      if let mutant = ScenarioMutation.withoutFaults(scenario) {
        mutants.append((scenario, mutant))
      }
    }
    #expect(mutants.count >= 13)
    let findings = await withTaskGroup(of: (String, ScenarioMutation.Finding, String).self) {
      group in
      var findings: [(String, ScenarioMutation.Finding, String)] = []
      var next = 0
      func launch() {
        guard next < mutants.count else { return }
        let (original, mutant) = mutants[next]
        next += 1
        group.addTask {
          // A run the harness made late runs again, as the batches do (LateRunRetry).
          let outcome = await LateRunRetry.outcome(mutant) { await runner.run(mutant) }
          let result = ScenarioResult(scenario: mutant, outcome: outcome)
          return (
            original.name,
            ScenarioMutation.finding(
              original: .pass, mutant: result.verdict,
              declaredSame: original.sameWithoutFaults != nil),
            result.judgement.reasons.joined(separator: "; ")
          )
        }
      }
      launch()
      launch()
      for await finding in group {
        findings.append(finding)
        launch()
      }
      return findings
    }
    #expect(findings.count == mutants.count)
    for (name, finding, reasons) in findings {
      #expect(
        ScenarioMutation.isSound(finding), "\(name): \(finding) without its faults: \(reasons)")
    }
  }

  /// The canary: the positive control with a censor rule that touches nothing the app does
  /// (a UDP port nobody uses) passes with and without it, and check --mutate says so (exit 5).
  @Test func aScenarioWhoseFaultChangesNothingIsReported() throws {
    let directory = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let baseline = try String(
      contentsOfFile: scenariosDirectory + "/healthy-baseline.json", encoding: .utf8)
    let idle = baseline.replacingOccurrences(
      of: #""app": {"#,
      with:
        #""network": {"censor": [{"action": "drop", "to": "any", "protocol": "udp", "port": 5353}]}, "app": {"#
    )
    #expect(idle != baseline)
    try idle.write(toFile: directory + "/idle-fault.json", atomically: true, encoding: .utf8)
    let (status, output) = try runTool(
      FailclosedBinary.path, ["check", "--mutate", directory + "/idle-fault.json"])
    #expect(status == 5, "\(output)")
    #expect(
      output.contains(
        "WARNING  idle-fault: PASS with and without 1 censor rule(s): its expectations do not "
          + "depend on its faults"), "\(output)")
  }
}

/// README's scenario counts are the library's.
@Suite struct ReadmeCountTests {
  @Test func theReadmeCountsEachLanesScenarios() throws {
    let readme = try String(contentsOfFile: repositoryRoot + "/README.md", encoding: .utf8)
    var mock = 0
    var real = 0
    for file in try ScenarioLoader.scenarioFiles(in: scenariosDirectory) {
      switch try ScenarioLoader.loadFile(file).get().lane {
      case .mock: mock += 1
      case .realTor: real += 1
      }
    }
    #expect(readme.contains("The mock lane (\(mock) scenarios)"), "the library has \(mock)")
    #expect(readme.contains("The real-Tor lane (\(real) scenarios"), "the library has \(real)")
  }
}

/// `replay` prints what the reports say (issue 20): sentences, not Swift type dumps; exposure
/// by the user's choice called exposure, never LEAK under a PASS; the reports and the capture
/// written, named relative to the report.
extension ScenarioRunnerTests {
  @Test func replayOfTheUsersChoiceSaysExposureInTheReportsWords() throws {
    let directory = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let (status, output) = try runTool(
      FailclosedBinary.path,
      [
        "replay", scenariosDirectory + "/preference-off-users-choice.json", "--report",
        directory + "/out",
      ])
    #expect(status == 0, "\(output)")
    #expect(output.contains("events (virtual seconds, as they happen):"))
    #expect(output.contains("exposure by the user's choice (Tor was off: reported, not a leak):"))
    #expect(output.contains("leaks: none"))
    #expect(!output.contains("LEAK"), "\(output)")
    for dump in ["Optional(", "ScenarioExpectation", "Transport.", "requestSent("] {
      #expect(!output.contains(dump), "a Swift dump in replay's output: \(dump)")
    }
    #expect(output.contains("  met          no leak: "))
    #expect(output.contains("\nverdict: PASS"))
    let json = try String(contentsOfFile: directory + "/out/report.json", encoding: .utf8)
    #expect(json.contains(#""pcap": "pcaps/preference-off-users-choice.pcap""#))
    #expect(
      FileManager.default.fileExists(
        atPath: directory + "/out/pcaps/preference-off-users-choice.pcap"))
    #expect(!FileManager.default.fileExists(atPath: directory + "/out/work"))
  }
}
