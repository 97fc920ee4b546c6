import Foundation

/// Holds a soak's samples to its goals: every count back at its starting value after every
/// run, resident memory flat, every scenario's verdict the same as its first run's. Pure.
///
/// The starting values are the start sample's. A phase with a set-up of its own (the real
/// lane's private network: its namespaces, links, tors and descriptors) holds its runs to the
/// sample taken once that set-up is made, and the sample after its teardown to the start
/// again; the cache alone keeps what the set-up put there (the network's authority keys are
/// made once and kept between runs by design), so it is held from then on to the set-up's.
enum SoakJudge {
  /// Resident memory may grow less than this, in percent, from run
  /// ``rssFromRun(runs:firstRound:)`` to the phase's last run.
  static let rssGrowthLimit = 5.0
  /// Memory is judged over at least this many runs (run k and the last included); over fewer
  /// it is reported, not judged.
  static let rssMinimumRuns = 10

  /// The run (1-based) memory growth is measured from: min(50, N/10), and never before every
  /// scenario of the phase has run once (`firstRound` runs: each scenario's first run grows
  /// the heap with what it alone uses, which is warming, not a leak).
  static func rssFromRun(runs: Int, firstRound: Int) -> Int {
    max(min(50, max(1, runs / 10)), firstRound + 1)
  }

  /// How many runs it took for every scenario of `scenarios` (in run order) to have run once.
  static func firstRound(_ scenarios: [String?]) -> Int {
    var seen: Set<String> = []
    var last = 0
    for (index, scenario) in scenarios.enumerated() where seen.insert(scenario ?? "").inserted {
      last = index + 1
    }
    return last
  }

  static func findings(_ samples: [SoakSample]) -> [SoakFinding] {
    countFindings(samples) + rssFindings(samples) + verdictFindings(samples)
  }

  /// The value each sample is held to, nil for a sample that is a reference itself.
  static func references(_ samples: [SoakSample]) -> [ResourceCounts?] {
    var start: ResourceCounts?
    var phaseReference: ResourceCounts?
    var result: [ResourceCounts?] = []
    for sample in samples {
      switch sample.point {
      case .start:
        start = sample.counts
        result.append(nil)
      case .setUp:
        phaseReference = sample.counts
        result.append(nil)
      case .run:
        result.append(phaseReference ?? start)
      case .tornDown:
        var held = start
        if let cache = phaseReference?[.cacheEntries] {
          held?[.cacheEntries] = cache
          start?[.cacheEntries] = cache
        }
        phaseReference = nil
        result.append(held)
      }
    }
    return result
  }

  static func countFindings(_ samples: [SoakSample]) -> [SoakFinding] {
    var findings: [SoakFinding] = []
    var startKinds: [String: Int] = [:]
    var phaseKinds: [String: Int]?
    for (sample, reference) in zip(samples, references(samples)) {
      switch sample.point {
      case .start: startKinds = sample.descriptorKinds
      case .setUp: phaseKinds = sample.descriptorKinds
      case .tornDown: phaseKinds = nil
      case .run: break
      }
      guard let reference else { continue }
      for count in sample.counts.differences(from: reference) {
        let expected = reference[count]
        let found = sample.counts[count]
        let place =
          sample.point == .tornDown
          ? "after the \(sample.phase?.rawValue ?? "") phase's teardown"
          : "after \(sample.phase?.rawValue ?? "") run \(sample.run ?? 0)"
            + (sample.scenario.map { " (\($0))" } ?? "")
        findings.append(
          SoakFinding(
            kind: .count, phase: sample.phase, run: sample.run, scenario: sample.scenario,
            count: count, expected: expected, found: found,
            text: "\(count.rawValue): \(found) \(place), \(expected) at the start "
              + "(\(found > expected ? "+" : "")\(found - expected)"
              + (count == .descriptors
                ? kindChanges(sample.descriptorKinds, from: phaseKinds ?? startKinds) : "") + ")"))
      }
    }
    return findings
  }

  /// "; pipe +2, anon_inode:[eventfd] +1": how the descriptors by kind moved.
  static func kindChanges(_ kinds: [String: Int], from reference: [String: Int]) -> String {
    let changes = Set(kinds.keys).union(reference.keys).sorted().compactMap { kind -> String? in
      let delta = (kinds[kind] ?? 0) - (reference[kind] ?? 0)
      return delta == 0 ? nil : "\(kind) \(delta > 0 ? "+" : "")\(delta)"
    }
    return changes.isEmpty ? "" : "; " + changes.joined(separator: ", ")
  }

  /// Memory growth of one phase: from run ``rssFromRun(runs:)`` to the last; nil with no run.
  static func rssGrowth(_ samples: [SoakSample], phase: SoakPhase)
    -> (fromRun: Int, fromKiB: Int, lastKiB: Int, percent: Double, judged: Bool)?
  {
    let runs = samples.filter { $0.point == .run && $0.phase == phase }
    guard let last = runs.last else { return nil }
    let fromRun = min(
      rssFromRun(runs: runs.count, firstRound: firstRound(runs.map(\.scenario))), runs.count)
    let from = runs[fromRun - 1].rssKiB
    let percent = from > 0 ? Double(last.rssKiB - from) / Double(from) * 100 : 0
    return (fromRun, from, last.rssKiB, percent, runs.count - fromRun + 1 >= rssMinimumRuns)
  }

  static func rssFindings(_ samples: [SoakSample]) -> [SoakFinding] {
    SoakPhase.allCases.compactMap { phase in
      guard let growth = rssGrowth(samples, phase: phase), growth.judged,
        growth.percent >= rssGrowthLimit
      else { return nil }
      let runs = samples.filter { $0.point == .run && $0.phase == phase }.count
      return SoakFinding(
        kind: .rss, phase: phase, run: runs, expected: growth.fromKiB, found: growth.lastKiB,
        text: String(
          format: "rss: %@ phase grew %.1f%% from run %d (%d KiB) to run %d (%d KiB), "
            + "the limit is %.0f%%",
          phase.rawValue, growth.percent, growth.fromRun, growth.fromKiB, runs, growth.lastKiB,
          rssGrowthLimit))
    }
  }

  static func verdictFindings(_ samples: [SoakSample]) -> [SoakFinding] {
    var first: [String: (verdict: String, run: Int)] = [:]
    var findings: [SoakFinding] = []
    for sample in samples where sample.point == .run {
      guard let scenario = sample.scenario, let verdict = sample.verdict, let phase = sample.phase
      else { continue }
      let key = phase.rawValue + " " + scenario
      guard let earlier = first[key] else {
        first[key] = (verdict, sample.run ?? 0)
        continue
      }
      if earlier.verdict != verdict {
        findings.append(
          SoakFinding(
            kind: .verdict, phase: phase, run: sample.run, scenario: scenario,
            text:
              "verdict: \(scenario) was \(verdict) at \(phase.rawValue) run \(sample.run ?? 0), "
              + "\(earlier.verdict) at its first run (\(earlier.run))"
              + (sample.why.map { ": " + $0.joined(separator: "; ") } ?? "")))
      }
    }
    return findings
  }
}
