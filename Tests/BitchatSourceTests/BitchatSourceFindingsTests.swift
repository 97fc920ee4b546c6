import Foundation
import Scenarios
import Testing

@testable import BitchatSource

/// The lane names lib.rs's restart race on a failed path-change-and-restart only when the run
/// carries its trace (after TorWillRestart, the old task's "Shutting down..." or "Error: ..."),
/// and calls any other failure there a new fault; passes and the model's runs get no note.
@Suite struct BitchatSourceFindingsTests {
  static func result(
    profile: AppPlan.Profile, verdict: ScenarioVerdict, summaries: [String]
  ) throws -> ScenarioResult {
    var scenario = try ScenarioLoader.loadFile(
      BitchatSourceLocation.packageRoot + "/Scenarios/path-change-and-restart.json"
    ).get()
    scenario.app.profile = profile
    var events = [
      ScenarioEvent(time: 0.1, name: "tor.bootstrapSummary", fields: ["value": "Bootstrapping..."]),
      ScenarioEvent(time: 80.0, name: "TorWillRestart"),
    ]
    for (offset, summary) in summaries.enumerated() {
      events.append(
        ScenarioEvent(
          time: 80.5 + Double(offset), name: "tor.bootstrapSummary", fields: ["value": summary]))
    }
    let outcome = ScenarioOutcome(
      events: events, audit: CaptureAudit(verdict: .pass),
      capture: CaptureStats(packets: 10, dropped: 0, positiveControlSeen: true))
    return ScenarioResult(
      scenario: scenario, outcome: outcome,
      judgement: Judgement(
        verdict: verdict, expectations: [], leaks: [], exposure: [], reasons: []))
  }

  @Test(arguments: ["Shutting down...", "Error: cannot bind 127.0.0.1:39050"])
  func theRaceIsNamedWhenItsTraceIsThere(_ summary: String) throws {
    let note = BitchatSourceFindings.note(
      try Self.result(
        profile: .bitchatSource, verdict: .failed,
        summaries: ["Bootstrapping...", "Ready", summary]))
    #expect(note?.contains("known finding in bitchat's code: lib.rs's restart race") == true)
  }

  @Test func aFailureWithoutTheTraceIsANewFault() throws {
    let note = BitchatSourceFindings.note(
      try Self.result(
        profile: .bitchatSource, verdict: .failed, summaries: ["Bootstrapping...", "Ready"]))
    #expect(note?.contains("without the trace of the known finding") == true, "\(note ?? "")")
  }

  @Test func passesAndTheModelGetNoNote() throws {
    #expect(
      BitchatSourceFindings.note(
        try Self.result(profile: .bitchatSource, verdict: .pass, summaries: ["Ready"])) == nil)
    #expect(
      BitchatSourceFindings.note(
        try Self.result(profile: .bitchat, verdict: .failed, summaries: ["Shutting down..."]))
        == nil)
  }
}
