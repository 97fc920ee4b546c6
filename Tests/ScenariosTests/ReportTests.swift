import Audit
import Foundation
import Testing

@testable import Reports
@testable import Scenarios

@Suite struct ReportTests {
  @Test func theSampleRunHasOneScenarioOfEachVerdict() {
    let report = makeSampleReport()
    #expect(report.results.map(\.verdict) == [.pass, .leak, .failed, .inconclusive, .pass, .pass])
    #expect(report.verdict == .leak)
    #expect(report.exitCode == 5)
    #expect(
      report.countsSentence
        == "6 scenarios: 3 pass, 1 inconclusive, 1 failed, 1 leak; 1 malformed file")
    var clean = report
    clean.results = [report.results[0]]
    clean.loadErrors = []
    #expect(clean.exitCode == 0)
    clean.loadErrors = report.loadErrors
    #expect(clean.verdict == .inconclusive)
    #expect(RunReport(startedAt: "", results: []).verdict == .inconclusive)
  }

  @Test func reportJSONIsTheSourceOfTruthAndParsesBack() throws {
    let text = JSONReport.render(makeSampleReport())
    let doc = try JSONParser.parse(text)
    #expect(doc["verdict"] == .string("leak"))
    #expect(doc["exitCode"] == .number(5))
    guard case .array(let scenarios) = doc["scenarios"] else {
      Issue.record("no scenarios")
      return
    }
    #expect(scenarios.count == 6)
    let leaky = scenarios[1]
    #expect(leaky["verdict"] == .string("leak"))
    guard case .array(let leaks) = leaky["leaks"] else {
      Issue.record("no leaks")
      return
    }
    #expect(leaks.count == 2)
    #expect(leaks[0]["class"] == .string("dns"))
    #expect(leaky["capture"]?["dropped"] == .number(0))
    #expect(
      scenarios[5]["exposure"].map { if case .array(let a) = $0 { a.count } else { -1 } } == 1)
    #expect(doc["malformed"].map { if case .array(let a) = $0 { a.count } else { -1 } } == 1)
    // A name carrying markup cannot close the <script> element the HTML embeds this in.
    #expect(!text.contains("</script>"))
  }

  @Test func junitXMLParsesWithXmllintAndHasOneTestcasePerScenario() throws {
    let dir = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let xml = JUnitReport.render(makeSampleReport())
    let path = dir + "/junit.xml"
    try xml.write(toFile: path, atomically: true, encoding: .utf8)
    let lint = try runTool("/usr/bin/xmllint", ["--noout", path])
    #expect(lint.status == 0, "\(lint.output)")
    let count = try runTool("/usr/bin/xmllint", ["--xpath", "count(//testcase)", path])
    #expect(count.output.trimmingCharacters(in: .whitespacesAndNewlines) == "7")
    let failures = try runTool("/usr/bin/xmllint", ["--xpath", "count(//testcase/failure)", path])
    #expect(failures.output.trimmingCharacters(in: .whitespacesAndNewlines) == "2")
    let errors = try runTool("/usr/bin/xmllint", ["--xpath", "count(//testcase/error)", path])
    #expect(errors.output.trimmingCharacters(in: .whitespacesAndNewlines) == "2")
    let suite = try runTool(
      "/usr/bin/xmllint", ["--xpath", "string(/testsuites/testsuite/@failures)", path])
    #expect(suite.output.trimmingCharacters(in: .whitespacesAndNewlines) == "2")
  }

  @Test func sarifHasTheSchemasRequiredFieldsAndOneResultPerLeak() throws {
    let doc = try JSONParser.parse(SARIFReport.render(makeSampleReport()))
    #expect(doc["version"] == .string("2.1.0"))
    #expect(doc["$schema"] == .string(SARIFReport.schemaURI))
    guard case .array(let runs) = doc["runs"], let run = runs.first else {
      Issue.record("no runs")
      return
    }
    #expect(run["tool"]?["driver"]?["name"] == .string("failclosed"))
    guard case .array(let rules) = run["tool"]?["driver"]?["rules"],
      case .array(let results) = run["results"]
    else {
      Issue.record("no rules or results")
      return
    }
    let ruleIDs = rules.compactMap { rule -> String? in
      if case .string(let id) = rule["id"] { return id } else { return nil }
    }
    #expect(ruleIDs.count == LeakClass.allCases.count + 1)
    #expect(ruleIDs.last == SARIFReport.canaryMissedRuleID)
    // Two leaks in the leaking scenario; the canary's expected leak and the exposure are
    // results too, suppressed with their reason.
    let suppressed = results.filter { $0["suppressions"] != nil }
    let justifications = suppressed.compactMap { result -> String? in
      guard case .array(let list) = result["suppressions"],
        case .string(let text)? = list.first?["justification"]
      else { return nil }
      return text
    }
    #expect(justifications.count == 2)
    #expect(justifications.contains { $0.hasPrefix("canary:") })
    #expect(justifications.contains { $0.hasPrefix("exposure:") })
    let alerts = results.filter { $0["suppressions"] == nil }
    #expect(alerts.count == 2)
    for (i, result) in alerts.enumerated() {
      guard case .string(let ruleID) = result["ruleId"] else {
        Issue.record("result \(i) has no ruleId")
        continue
      }
      #expect(ruleIDs.contains(ruleID))
      if case .number(let index) = result["ruleIndex"] {
        #expect(ruleIDs[Int(index)] == ruleID)
      } else {
        Issue.record("result \(i) has no ruleIndex")
      }
      if case .string(let text) = result["message"]?["text"] {
        #expect(text.contains("activation-revoked"))
      } else {
        Issue.record("result \(i) has no message.text")
      }
      guard case .array(let locations) = result["locations"], let location = locations.first else {
        Issue.record("result \(i) has no locations")
        continue
      }
      #expect(
        location["physicalLocation"]?["artifactLocation"]?["uri"]
          == .string("Scenarios/activation-revoked.json"))
    }
  }

  @Test func sarifRaisesACanaryThatCaughtNothing() throws {
    let missed = ScenarioResult(
      scenario: makeScenario([.leakCaught(classes: [.dns])], name: "naive-port-canary"),
      outcome: makeOutcome())
    let report = RunReport(
      startedAt: "2026-11-29T14:00:00Z", versions: ["failclosed": "0.1.0"], results: [missed],
      loadErrors: [])
    let doc = try JSONParser.parse(SARIFReport.render(report))
    guard case .array(let runs) = doc["runs"], case .array(let results)? = runs.first?["results"]
    else {
      Issue.record("no results")
      return
    }
    #expect(results.count == 1)
    #expect(results.first?["ruleId"] == .string(SARIFReport.canaryMissedRuleID))
    #expect(results.first?["level"] == .string("error"))
    #expect(results.first?["suppressions"] == nil)
    if case .string(let text)? = results.first?["message"]?["text"] {
      #expect(text.contains("the detector did not fire"))
    } else {
      Issue.record("no message")
    }
  }

  @Test func markdownSummaryLeadsWithTheVerdictAndExplainsEachFailure() {
    let md = MarkdownSummary.render(makeSampleReport())
    #expect(md.hasPrefix("# failclosed leak audit: LEAK\n"))
    #expect(md.contains("| 2 | activation-revoked | ❌ LEAK | 2 | 0/1 |"))
    #expect(md.contains("### stall-past-75s: FAILED"))
    #expect(md.contains("TorBootstrapDidStall first posted at 80 s, after 75 s"))
    #expect(md.contains("### relays-dropped: INCONCLUSIVE"))
    #expect(
      md.contains(
        "`Scenarios/broken.json: expect[2].by: expected a number of seconds, got \"soon\"`"))
    #expect(!md.contains("### healthy-baseline"))
  }

  @Test func terminalProgressAndSummaryTable() {
    #expect(
      TerminalFormat.progressLine(
        index: 3, total: 23, name: "healthy-baseline", verdict: .pass, wallSeconds: 1.24,
        nameWidth: 20) == "[ 3/23] healthy-baseline     PASS            1.2 s")
    #expect(
      TerminalFormat.progressLine(
        index: 12, total: 23, name: "a-very-long-scenario-name-indeed", verdict: .inconclusive,
        wallSeconds: 61.06, nameWidth: 20) == "[12/23] a-very-long-scena... INCONCLUSIVE   61.1 s")
    let table = TerminalFormat.summaryTable(makeSampleReport())
    let lines = table.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    #expect(lines[0].hasPrefix("Scenario            Verdict"))
    #expect(lines[3].hasPrefix("activation-revoked  LEAK"))
    #expect(lines[3].contains("2 leaks: dns to 10.200.2.2:53"))
    #expect(lines.contains { $0.hasPrefix("broken              MALFORMED") })
    #expect(
      lines.last == "LEAK: 6 scenarios: 3 pass, 1 inconclusive, 1 failed, 1 leak; 1 malformed file")
  }

  @Test func theWriterWritesEveryReportAndThePcapOfEachFailure() throws {
    let dir = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let pcap = dir + "/capture.pcap"
    try Data([0xD4, 0xC3, 0xB2, 0xA1]).write(to: URL(fileURLWithPath: pcap))
    let written = try ReportWriter.write(makeSampleReport(pcapPath: pcap), to: dir + "/out")
    #expect(
      written.map { ($0 as NSString).lastPathComponent } == ReportWriter.fileNames + [
        "activation-revoked.pcap"
      ])
    #expect(
      FileManager.default.contents(atPath: dir + "/out/pcaps/activation-revoked.pcap")?.count == 4)
    // The reports name the copy, relative to the report directory (the run's own capture is
    // removed with its working directory); a passing scenario's capture is named nowhere.
    let json = try String(contentsOfFile: dir + "/out/report.json", encoding: .utf8)
    #expect(json.contains(#""pcap": "pcaps/activation-revoked.pcap""#))
    #expect(!json.contains(pcap))
    let html = try String(contentsOfFile: dir + "/out/index.html", encoding: .utf8)
    #expect(html.contains(#"href="pcaps/activation-revoked.pcap""#))
  }
}

@Suite struct ScenarioSelectionTests {
  let names = [
    "healthy-baseline", "stall-past-75s", "relays-dropped-stall-at-conn", "naive-port-canary",
    "custom-relay-cap",
  ]
  var scenarios: [Scenario] { names.map { makeScenario([.noLeak], name: $0) } }

  @Test func filterBySubstringGlobAndCommaList() {
    #expect(
      ScenarioSelection.select(scenarios, filter: "stall").map(\.name) == [
        "stall-past-75s", "relays-dropped-stall-at-conn",
      ])
    #expect(
      ScenarioSelection.select(scenarios, filter: "STALL-*").map(\.name) == ["stall-past-75s"])
    #expect(
      ScenarioSelection.select(scenarios, filter: "*-ca?").map(\.name) == ["custom-relay-cap"])
    #expect(
      ScenarioSelection.select(scenarios, filter: "canary, healthy").map(\.name) == [
        "healthy-baseline", "naive-port-canary",
      ])
    #expect(ScenarioSelection.select(scenarios, filter: "").count == 5)
    #expect(ScenarioSelection.select(scenarios, filter: "nothing-like-this").isEmpty)
    #expect(ScenarioSelection.glob(Array("a*b*c"), Array("aXXbYYc")))
    #expect(!ScenarioSelection.glob(Array("a*b*c"), Array("aXXbYY")))
  }

  @Test func shardsPartitionTheScenariosWhateverTheirOrder() throws {
    var seen: [String] = []
    for i in 1...3 {
      let shard = try ScenarioSelection.Shard(parsing: "\(i)/3")
      let part = ScenarioSelection.select(scenarios, shard: shard).map(\.name)
      let reversed = ScenarioSelection.select(scenarios.reversed(), shard: shard).map(\.name)
      #expect(Set(part) == Set(reversed))
      #expect(part.count <= 2 && part.count >= 1)
      seen += part
    }
    #expect(seen.sorted() == names.sorted())
    let filteredShard = ScenarioSelection.select(
      scenarios, filter: "stall", shard: try .init(parsing: "2/2"))
    #expect(filteredShard.map(\.name) == ["stall-past-75s"])
  }

  @Test(arguments: ["0/3", "4/3", "1/0", "a/b", "1", "1/2/3", "", "-1/2"])
  func badShardsAreRejectedWithTheExpectedForm(text: String) {
    #expect(throws: ScenarioSelection.SelectionError.self) {
      try ScenarioSelection.Shard(parsing: text)
    }
    do {
      _ = try ScenarioSelection.Shard(parsing: text)
    } catch {
      #expect(error.message == "--shard: expected I/N with 1 <= I <= N (e.g. 2/4), got \"\(text)\"")
    }
  }
}

/// A Tor crash and the censor's changes are in the reports' text, not only in report.json.
@Suite struct HarnessEventReportTests {
  @Test func aCrashAndACensorChangeAreInJUnitAndTheSummary() {
    let outcome = makeOutcome(
      events: [
        ev(0, "TorWillStart"), ev(10, "censor-changed", ["rules": "0", "active": "none"]),
        ev(30, "tor-crashed", ["by": "crashAt"]),
      ],
      leaks: [leak(.dns, at: 31)])
    let report = RunReport(
      startedAt: "2026-12-01T00:00:00Z", versions: [:], timeScale: 25,
      results: [ScenarioResult(scenario: makeScenario([.noLeak], name: "crash"), outcome: outcome)])
    #expect(outcome.harnessLines == ["10 s: censor now: none", "30 s: Tor crashed (crashAt)"])
    let junit = JUnitReport.render(report)
    #expect(
      junit.contains("faults applied:\n  10 s: censor now: none\n  30 s: Tor crashed (crashAt)"))
    let summary = MarkdownSummary.render(report)
    #expect(summary.contains("- fault applied: 30 s: Tor crashed (crashAt)"))
  }
}
