import Scenarios

/// A replayed measurement's result side by side: what OONI measured and what the sandbox
/// reproduced (the bootstrap stop, each class's reachability), and the app's verdict under
/// that censorship. Pure: lines for `replay --from-ooni` and the lane's log.
public enum ReplayComparison {
  public struct Row: Sendable, Equatable {
    public var what: String
    public var measured: String
    public var reproduced: String
    public var matches: Bool
  }

  public static func rows(_ result: ScenarioResult) -> [Row] {
    var rows: [Row] = []
    let furthest = result.outcome.torTimeline.furthestBootstrap
    let reproducedStop =
      furthest.map { "\($0.progress ?? 0)% \($0.tag ?? "(no tag)")" } ?? "no bootstrap step"
    var stopMeasured = false
    for item in result.judgement.expectations {
      if let stop = item.expectation.as(ScenarioExpectation.BootstrapStopsAt.self) {
        let (progress, tag, measured) = (stop.progress, stop.tag, stop.measured)
        stopMeasured = true
        rows.append(
          Row(
            what: "bootstrap stop",
            measured: measured.map { m in
              let today = "\(progress)% \(tag)"
              return m == today || m.hasPrefix(today + ",") ? m : "\(m) = \(today)"
            } ?? "\(progress)% \(tag)",
            reproduced: reproducedStop, matches: item.status == .met))
      } else if let probe = item.expectation.as(ScenarioExpectation.Reachability.self) {
        let (targets, reachable, failure, measured) = (
          probe.targets, probe.reachable, probe.failure, probe.measured
        )
        let mine = (result.outcome.reachability ?? []).filter { $0.targetClass == targets }
        let ok = mine.filter { $0.failure == nil }.count
        let failures = mine.compactMap { $0.failure }
        let sandbox =
          mine.isEmpty
          ? "not probed"
          : "\(ok)/\(mine.count) reachable"
            + (failures.isEmpty ? "" : ", " + ExpectationJudge.tally(failures))
        rows.append(
          Row(
            what: targets.rawValue,
            measured: (measured ?? "?") + " -> planned \(reachable)/\(targets.nodes.count)"
              + (failure.map { ", \($0)" } ?? ""),
            reproduced: sandbox, matches: item.status == .met))
      }
    }
    if !stopMeasured {
      rows.insert(
        Row(
          what: "bootstrap stop", measured: "not measured by this test",
          reproduced: reproducedStop, matches: true), at: 0)
    }
    return rows
  }

  /// The block `replay --from-ooni` prints.
  public static func lines(_ result: ScenarioResult) -> [String] {
    var lines = [
      "measured vs reproduced (\(result.scenario.ooni?.source ?? result.scenario.name)):"
    ]
    for row in rows(result) {
      lines.append(
        "  " + (row.matches ? "[ok]     " : "[FAILED] ") + row.what + ": measured " + row.measured
          + "; reproduced " + row.reproduced)
    }
    lines.append(
      "  \(result.scenario.app.profile.rawValue) under this censorship: "
        + "\(result.verdict.rawValue.uppercased()) in "
        + String(format: "%.1f", result.outcome.wallSeconds) + " s")
    return lines
  }
}
