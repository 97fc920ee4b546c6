import Foundation
import TestSupport
import Testing

@testable import Reports
@testable import Scenarios

/// A findings baseline (`--baseline`, `--write-baseline`): known findings stop failing the run,
/// a new one or a known one no longer seen still does, and every report says which.
@Suite struct FindingBaselineTests {
  /// The sample run without its malformed file and its inconclusive scenario: its failures are
  /// the leak (activation-revoked) and the late notification (stall-past-75s).
  func failingRun() -> RunReport {
    var report = makeSampleReport()
    report.loadErrors = []
    report.results.removeAll { $0.verdict == .inconclusive }
    return report
  }

  func against(_ baseline: FindingBaseline, _ report: RunReport) -> RunReport {
    var report = report
    let findings = Finding.of(report, system: "model")
    report.baseline = baseline.compare(
      findings, system: "model", scenariosRun: Set(report.results.map(\.scenario.name))
    ).runBaseline(for: report, system: "model")
    return report
  }

  @Test func aRunWhoseOnlyFailuresAreKnownPassesAndSaysSo() throws {
    let report = failingRun()
    #expect(report.exitCode == 5)
    let written = FindingBaseline(findings: Finding.of(report, system: "model"))
      .sarif(toolVersion: "0.1.0")
    let baseline = try FindingBaseline(sarif: written, file: "b.sarif")
    #expect(baseline.findings.count == 4)  // two leaks, no leak not met, the late notification
    let judged = against(baseline, report)
    #expect(judged.exitCode == 0)
    #expect(judged.baseline?.knownScenarios == ["activation-revoked", "stall-past-75s"])
    #expect(
      judged.baseline?.lines.allSatisfy { $0.hasPrefix("known (baseline, unchanged)") } == true)
    // The reports say which: SARIF's baselineState, JUnit's <skipped>, summary.md's section.
    let sarif = SARIFReport.render(judged)
    #expect(
      sarif.contains(#""baselineState" : "unchanged""#)
        || sarif.contains(#""baselineState": "unchanged""#))
    #expect(!sarif.contains("\"new\""))
    let junit = JUnitReport.render(judged)
    #expect(junit.contains("<skipped type=\"known-finding\""))
    #expect(!junit.contains("<failure"))
    #expect(MarkdownSummary.render(judged).contains("## Findings against the baseline"))
  }

  @Test func aNewFindingFailsTheRunAndIsNamedNew() throws {
    let report = failingRun()
    // Canary: a baseline that knows only the late notification leaves the leak new.
    let known = Finding.of(report, system: "model").filter { $0.scenario == "stall-past-75s" }
    let judged = against(FindingBaseline(findings: known), report)
    #expect(judged.exitCode == 5)
    #expect(judged.baseline?.knownScenarios == ["stall-past-75s"])
    #expect(
      judged.baseline?.lines.contains {
        $0.hasPrefix("NEW (not in the baseline): activation-revoked")
      } == true)
    #expect(JUnitReport.render(judged).contains("<failure"))
  }

  @Test func aKnownFindingThatDisappearsFailsTheRunAndIsNamedAbsent() throws {
    let report = failingRun()
    let findings = Finding.of(report, system: "model")
    var fixed = report
    fixed.results.removeAll { $0.scenario.name == "stall-past-75s" }
    // The scenario ran and passed: its known finding is absent.
    var passing = report.results.first { $0.scenario.name == "stall-past-75s" }!
    passing.judgement = ExpectationJudge.judge(
      passing.scenario,
      makeOutcome(events: [ev(0, "TorWillStart"), ev(74, "TorBootstrapDidStall")]))
    fixed.results.append(passing)
    let judged = against(FindingBaseline(findings: findings), fixed)
    #expect(judged.exitCode == 5)
    #expect(judged.baseline?.absent.count == 1)
    #expect(
      judged.baseline?.lines.contains { $0.hasPrefix("ABSENT") && $0.contains("stall-past-75s") }
        == true)
    #expect(SARIFReport.render(judged).contains("absent"))
    // A scenario that did not run (--filter) leaves its known findings alone.
    var filtered = report
    filtered.results.removeAll { $0.scenario.name == "stall-past-75s" }
    #expect(against(FindingBaseline(findings: findings), filtered).baseline?.absent.isEmpty == true)
  }

  @Test func aFindingsFingerprintNamesTheSystemTheScenarioAndWhatNotWhen() {
    let findings = Finding.of(failingRun(), system: "bitchat-source")
    #expect(
      findings.map(\.fingerprint).contains(
        "bitchat-source|stall-past-75s|expectation|TorBootstrapDidStall posted exactly 1 time by 75 s"
      ))
    #expect(findings.allSatisfy { !$0.fingerprint.contains("20.1") })
    // The canary's caught leak is not a finding; an exposure is not either.
    #expect(
      !findings.contains { $0.scenario == "naive-port-canary" || $0.scenario == "preference-off" })
  }

  @Test func aMalformedBaselineIsAnErrorNamingThePlace() {
    for (text, expected) in [
      ("{", "b.sarif: not JSON"),
      (#"{"version": "2.1.0"}"#, "no \"runs\" array"),
      (
        #"{"runs": [{"results": [{"message": {"text": "x"}}]}]}"#,
        "runs[0].results[0]: no partialFingerprints"
      ),
      (
        #"{"runs": [{"results": [{"partialFingerprints": {"failclosedFinding/v1": "x"}}]}]}"#,
        "is not SYSTEM|SCENARIO"
      ),
    ] {
      do {
        _ = try FindingBaseline(sarif: text, file: "b.sarif")
        Issue.record("\(text) was accepted")
      } catch {
        #expect(error.description.contains(expected), "\(error)")
      }
    }
  }

  @Test func theShippedBaselineHoldsTheKnownFindingOfThePinnedBitchatCommit() throws {
    let path = repositoryRoot + "/baselines/bitchat-9b84b36.sarif"
    let baseline = try FindingBaseline(
      sarif: try String(contentsOfFile: path, encoding: .utf8), file: path)
    #expect(!baseline.findings.isEmpty)
    #expect(
      baseline.findings.allSatisfy {
        $0.system == "bitchat-source" && $0.scenario == "path-change-and-restart"
      })
  }
}
