import Testing

@testable import FailClosedCLI

/// The soak's goals on made-up samples: a count off after a run is a finding naming the
/// count, the run and the scenario (the canary), a clean series has none (the positive
/// control); the real lane's set-up, memory growth and verdicts.
@Suite struct SoakJudgeTests {
  static let start = ResourceCounts(
    Dictionary(uniqueKeysWithValues: SoakCount.allCases.map { ($0, 5) }))

  static func sample(
    _ point: SoakSample.Point, _ phase: SoakPhase? = nil, run: Int? = nil,
    scenario: String? = nil, verdict: String? = "pass", counts: ResourceCounts = start,
    rss: Int = 50_000
  ) -> SoakSample {
    SoakSample(
      point: point, phase: phase, run: run, scenario: point == .run ? scenario ?? "s" : nil,
      verdict: point == .run ? verdict : nil, counts: counts, rssKiB: rss, threads: 4,
      elapsedSeconds: Double(run ?? 0))
  }

  static func runs(_ phase: SoakPhase, _ count: Int, rss: (Int) -> Int = { _ in 50_000 })
    -> [SoakSample]
  {
    (1...count).map { sample(.run, phase, run: $0, rss: rss($0)) }
  }

  @Test func aCleanSoakHasNoFinding() {
    let samples = [Self.sample(.start)] + Self.runs(.mock, 20) + Self.runs(.exec, 3)
    #expect(SoakJudge.findings(samples).isEmpty)
    let phases = SoakPhaseSummary.make(samples, findings: [])
    #expect(phases.map(\.phase) == [.mock, .exec])
    #expect(phases[0].counts["descriptors"] == .init(start: 5, end: 5, max: 5))
  }

  @Test(arguments: SoakCount.allCases)
  func aCountOffAfterARunIsAFindingNamingIt(_ count: SoakCount) throws {
    var leaked = Self.start
    leaked[count] += 1
    var samples = [Self.sample(.start)] + Self.runs(.mock, 3)
    samples[2] = Self.sample(.run, .mock, run: 2, scenario: "healthy-baseline", counts: leaked)
    let findings = SoakJudge.findings(samples)
    #expect(findings.count == 1)
    let finding = try #require(findings.first)
    #expect(finding.kind == .count && finding.count == count)
    #expect(finding.run == 2 && finding.scenario == "healthy-baseline" && finding.phase == .mock)
    #expect(finding.expected == 5 && finding.found == 6)
    #expect(finding.text.hasPrefix("\(count.rawValue): 6 after mock run 2 (healthy-baseline)"))
    // A count below its start differs too (a run that removed what it did not make).
    samples[2].counts[count] = 4
    #expect(SoakJudge.findings(samples).first?.found == 4)
  }

  @Test func descriptorFindingsSayWhichKindsMoved() {
    var start = Self.sample(.start)
    start.descriptorKinds = ["pipe": 2, "socket": 1]
    var run = Self.sample(.run, .exec, run: 1)
    run.counts[.descriptors] = 7
    run.descriptorKinds = ["pipe": 2, "socket": 3]
    let text = SoakJudge.findings([start, run]).first?.text ?? ""
    #expect(text.contains("(+2; socket +2)"))
  }

  @Test func theRealPhaseIsHeldToItsSetUpThenToTheStart() {
    var network = Self.start
    network[.namespaces] += 3
    network[.children] += 7
    network[.cacheEntries] += 12
    var afterTeardown = Self.start
    afterTeardown[.cacheEntries] += 12
    let clean =
      [Self.sample(.start), Self.sample(.setUp, .real, counts: network)]
      + (1...3).map { Self.sample(.run, .real, run: $0, counts: network) }
      + [Self.sample(.tornDown, .real, counts: afterTeardown)]
      + Self.runs(.exec, 2).map {
        var sample = $0
        sample.counts = afterTeardown
        return sample
      }
    // The network's namespaces and tors are the phase's start; the cache keeps its keys.
    #expect(SoakJudge.findings(clean).isEmpty)
    // A tor left after the teardown is a finding; so is a run that adds to the network's.
    var leftTor = clean
    leftTor[5].counts[.children] += 1
    #expect(SoakJudge.findings(leftTor).map(\.count) == [.children])
    #expect(
      SoakJudge.findings(leftTor).first?.text.contains("after the real phase's teardown") == true)
    var leftInRun = clean
    leftInRun[3].counts[.namespaces] += 2
    #expect(SoakJudge.findings(leftInRun).map(\.run) == [2])
    // The cache may grow only at the set-up, never in a run.
    var cacheInExec = clean
    cacheInExec[7].counts[.cacheEntries] += 1
    #expect(SoakJudge.findings(cacheInExec).map(\.count) == [.cacheEntries])
  }

  @Test func memoryGrowthIsMeasuredFromRunKAndJudgedFromTenRuns() {
    #expect(SoakJudge.rssFromRun(runs: 500, firstRound: 33) == 50)
    #expect(SoakJudge.rssFromRun(runs: 50, firstRound: 1) == 5)
    #expect(SoakJudge.rssFromRun(runs: 50, firstRound: 9) == 10)
    #expect(SoakJudge.rssFromRun(runs: 3, firstRound: 1) == 2)
    #expect(SoakJudge.firstRound(["a", "b", "a", "c", "b"]) == 4)
    // Never before every scenario ran once: 12 runs round 33 scenarios are all warming.
    var warming = [Self.sample(.start)] + Self.runs(.mock, 12) { 40_000 + $0 * 1_000 }
    for index in 1...12 { warming[index].scenario = "s\(index)" }
    #expect(SoakJudge.findings(warming).isEmpty)
    #expect(SoakPhaseSummary.make(warming, findings: []).first?.rssJudged == false)
    // Flat after run 50 of 500: early growth (warming) does not count.
    let flat =
      [Self.sample(.start)] + Self.runs(.mock, 500) { $0 < 50 ? 40_000 + $0 * 100 : 50_000 }
    #expect(SoakJudge.findings(flat).isEmpty)
    // 10 KiB a run from run 50: 4,500 KiB on 50,000 is 9%, a finding.
    let growing = [Self.sample(.start)] + Self.runs(.mock, 500) { 50_000 + max(0, $0 - 50) * 10 }
    let findings = SoakJudge.findings(growing)
    #expect(findings.map(\.kind) == [.rss])
    #expect(findings.first?.text.contains("from run 50 (50000 KiB) to run 500 (54500 KiB)") == true)
    // Just under the limit passes.
    let under = [Self.sample(.start)] + Self.runs(.mock, 500) { $0 >= 500 ? 52_490 : 50_000 }
    #expect(SoakJudge.findings(under).isEmpty)
    // Under ten runs from k memory is shown, not judged.
    let few = [Self.sample(.start)] + Self.runs(.exec, 10) { 50_000 + $0 * 10_000 }
    #expect(SoakJudge.findings(few).isEmpty)
    #expect(SoakPhaseSummary.make(few, findings: []).first?.rssJudged == false)
  }

  @Test func aVerdictDifferentFromTheFirstRunsIsAFinding() {
    var samples = [Self.sample(.start)] + Self.runs(.mock, 4)
    for index in 1...4 { samples[index].scenario = index % 2 == 0 ? "a" : "b" }
    #expect(SoakJudge.findings(samples).isEmpty)
    samples[4].verdict = "inconclusive"
    let findings = SoakJudge.findings(samples)
    #expect(findings.map(\.kind) == [.verdict])
    #expect(
      findings.first?.text == "verdict: a was inconclusive at mock run 4, pass at its first run (2)"
    )
    // With the judge's words when the run says why.
    samples[4].why = ["late action", "3 earlier run(s) set aside"]
    #expect(
      SoakJudge.findings(samples).first?.text.hasSuffix(
        "(2): late action; 3 earlier run(s) set aside") == true)
  }

  @Test func theTablesShowEachPhaseAndCount() {
    var samples = [Self.sample(.start)] + Self.runs(.mock, 12)
    samples[12].counts[.links] = 9
    let findings = SoakJudge.findings(samples)
    let table = SoakPhaseSummary.markdown(SoakPhaseSummary.make(samples, findings: findings))
    #expect(table.contains("| mock | 12 |"))
    #expect(table.contains("| links | 5 / 9 / 9 |"))
    #expect(table.contains("| namespaces | 5 / 5 / 5 |"))
  }
}
