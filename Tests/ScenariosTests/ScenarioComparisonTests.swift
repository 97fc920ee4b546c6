import Foundation
import Reports
import TestSupport
import Testing

@testable import Scenarios

/// `leak-audit --compare`'s judgement of two runs of one scenario, from judged results built
/// here: the same run on both sides is the same (positive control); a late notification, an
/// inverted order, a different route or verdict is a difference (canaries); a difference the
/// Linux list explains is explained, and only for its scenario and item.
@Suite struct ScenarioComparisonTests {
  static func result(_ events: [ScenarioEvent], leaks: [ScenarioLeak] = []) -> ScenarioResult {
    let scenario = makeScenario([
      .noLeak, .notification(name: "TorDidBecomeReady", by: 20, count: nil),
    ])
    return ScenarioResult(scenario: scenario, outcome: makeOutcome(events: events, leaks: leaks))
  }

  static func healthy(readyAt ready: Double = 6, route: String = "tor") -> [ScenarioEvent] {
    [
      ScenarioEvent(time: 0, name: "TorWillStart"),
      ScenarioEvent(time: 0.01, name: "proxy-mode", fields: ["useTor": "true"]),
      ScenarioEvent(time: ready, name: "TorDidBecomeReady"),
      ScenarioEvent(time: ready, name: "ready-changed", fields: ["isReady": "true"]),
      ScenarioEvent(
        time: ready + 0.3, name: "relay-connecting",
        fields: ["relay": "wss://relay1.world", "via": route]),
      ScenarioEvent(
        time: ready + 0.4, name: "request-sent",
        fields: ["url": "https://dir.world/relays.csv", "transport": route]),
    ]
  }

  static func compare(
    _ a: [ScenarioEvent], _ b: [ScenarioEvent], known: KnownDifferences = .none,
    scenario: String = "s"
  ) -> ScenarioComparison {
    ScenarioComparison(
      scenario: scenario, a: ComparisonObservation(result(a)), b: ComparisonObservation(result(b)),
      explained: known)
  }

  /// lib.rs's restart race on bitchat's code (docs/bitchat-source.md, "Findings"): a run that
  /// carries its trace is explained by the finding; the same failure without the trace is an
  /// unexplained difference (canary), and so is the trace in another scenario.
  @Test func aKnownFindingsTraceExplainsItsRunAndNothingElse() {
    let scenario = "path-change-and-restart"
    let model = Self.healthy() + [ScenarioEvent(time: 80, name: "TorWillRestart")]
    var stuck = Array(Self.healthy().prefix(2)) + [ScenarioEvent(time: 80, name: "TorWillRestart")]
    let plain = stuck
    stuck.append(
      ScenarioEvent(
        time: 81, name: "tor.bootstrapSummary", fields: ["value": "Shutting down..."]))
    func observation(_ events: [ScenarioEvent], name: String) -> ComparisonObservation {
      let result = ScenarioResult(
        scenario: makeScenario(
          [.noLeak, .notification(name: "TorDidBecomeReady", by: 20, count: nil)], name: name),
        outcome: makeOutcome(events: events))
      return ComparisonObservation(result)
    }
    let traced = observation(stuck, name: scenario)
    #expect(traced.findings == [BitchatSourceFindings.restartRace.title])
    let explained = ScenarioComparison(
      scenario: scenario, a: observation(model, name: scenario), b: traced, explained: .none)
    #expect(!explained.differences.isEmpty)
    #expect(explained.unexplained.isEmpty)
    #expect(explained.differences.allSatisfy { $0.explanation?.contains("lib.rs") == true })

    let untraced = ScenarioComparison(
      scenario: scenario, a: observation(model, name: scenario),
      b: observation(plain, name: scenario), explained: .none)
    #expect(!untraced.unexplained.isEmpty)
    let elsewhere = observation(stuck, name: "stall-past-75s")
    #expect(elsewhere.findings == [])
  }

  @Test func theSameRunIsTheSameAndTimesWithinTheToleranceAgree() {
    #expect(Self.compare(Self.healthy(), Self.healthy()).differences.isEmpty)
    // Readiness 1.2 s later (bitchat's 1.25 s SOCKS probe cadence): the same.
    #expect(Self.compare(Self.healthy(readyAt: 6), Self.healthy(readyAt: 7.2)).differences.isEmpty)
  }

  @Test func aLateNotificationIsADifference() {
    let comparison = Self.compare(Self.healthy(readyAt: 6), Self.healthy(readyAt: 12))
    let keys = comparison.unexplained.map(\.key)
    #expect(keys.contains("notification TorDidBecomeReady"))
    #expect(
      comparison.unexplained.first { $0.key == "notification TorDidBecomeReady" }?.b == "12 s")
  }

  @Test func anInvertedOrderBeyondTheToleranceIsADifference() {
    var late = Self.healthy()
    // The relay connects before readiness, 5 s earlier.
    late[4].time = 1
    let comparison = Self.compare(Self.healthy(), late)
    #expect(comparison.unexplained.map(\.key).contains("order"))
    #expect(
      comparison.items.first { $0.key == "order" }?.b.contains("*relay connect via tor") == true)
    // Within the tolerance the order is not held against either side.
    var close = Self.healthy()
    close[4].time = 5.5
    #expect(!Self.compare(Self.healthy(), close).unexplained.map(\.key).contains("order"))
  }

  @Test func anotherRouteIsADifferenceInConnectionsAndRequests() {
    let comparison = Self.compare(Self.healthy(), Self.healthy(route: "direct"))
    let keys = Set(comparison.unexplained.map(\.key))
    #expect(keys.isSuperset(of: ["connections", "requests"]))
  }

  @Test func aVerdictAndAnExpectationThatDifferAreDifferences() {
    let leaking = Self.result(Self.healthy(), leaks: [leak(.dns, at: 3)])
    let comparison = ScenarioComparison(
      scenario: "s", a: ComparisonObservation(Self.result(Self.healthy())),
      b: ComparisonObservation(leaking), explained: .none)
    let keys = Set(comparison.unexplained.map(\.key))
    #expect(keys.isSuperset(of: ["verdict", "expectation 1", "leaks"]))
  }

  @Test func anExplainedDifferenceCountsOnlyForItsScenarioAndItem() {
    let known = KnownDifferences(entries: [
      .init(scenario: "s", item: "notification TorDidBecomeReady", section: "L9", why: "because")
    ])
    let explained = Self.compare(Self.healthy(), Self.healthy(readyAt: 12), known: known)
    #expect(explained.unexplained.isEmpty)
    #expect(explained.differences.first?.explanation?.contains("L9: because") == true)
    let elsewhere = Self.compare(
      Self.healthy(), Self.healthy(readyAt: 12), known: known, scenario: "other")
    #expect(elsewhere.unexplained.map(\.key) == ["notification TorDidBecomeReady"])
  }

  /// The report fails (exit 5) on an unexplained difference, passes (0) when all are
  /// explained, and is undecided (2) when a side could not run; report.json carries both
  /// sides, which --compare-reuse reads back.
  @Test func theReportsExitCodeAndItsJSONRoundTrip() throws {
    let a = ComparisonObservation(Self.result(Self.healthy()))
    let b = ComparisonObservation(Self.result(Self.healthy(readyAt: 12)))
    let row = ComparisonReport.Row(
      comparison: ScenarioComparison(scenario: "s", a: a, b: b, explained: .none), a: a, b: b)
    let report = ComparisonReport(
      sideA: "bitchat", sideB: "bitchat-source", tolerance: 2, startedAt: "t", rows: [row])
    #expect(report.exitCode == 5)
    #expect(report.terminalText().contains("! notification TorDidBecomeReady"))
    #expect(report.markdown().contains("**unexplained**"))
    #expect(report.html().contains("class=\"different\""))
    let back = try ComparisonReport.observations(
      fromJSON: Array(report.jsonText().utf8), side: "bitchat-source")
    #expect(back["s"] == b)
    #expect(throws: ComparisonReuseError.self) {
      try ComparisonReport.observations(fromJSON: Array(report.jsonText().utf8), side: "hardened")
    }
    let same = ComparisonReport.Row(
      comparison: ScenarioComparison(scenario: "s", a: a, b: a, explained: .none), a: a, b: a)
    #expect(
      ComparisonReport(sideA: "x", sideB: "y", tolerance: 2, startedAt: "t", rows: [same])
        .exitCode == 0)
    var broken = a
    broken.runError = "the app crashed"
    let undecided = ComparisonReport.Row(
      comparison: ScenarioComparison(scenario: "s", a: broken, b: broken, explained: .none),
      a: broken, b: broken)
    #expect(
      ComparisonReport(sideA: "x", sideB: "y", tolerance: 2, startedAt: "t", rows: [undecided])
        .exitCode == 2)
  }

  /// Every entry of the Linux list is in docs/linux-differences.md under its section, with its
  /// scenario and item, so the doc and the code say the same.
  @Test func theLinuxListAndTheDocAgree() throws {
    let doc = try String(
      contentsOfFile: repositoryRoot + "/docs/linux-differences.md", encoding: .utf8)
    for entry in KnownDifferences.linux.entries {
      #expect(doc.contains("| \(entry.scenario) | \(entry.item) | \(entry.section) |"), "\(entry)")
    }
  }
}
