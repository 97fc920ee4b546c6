/// A replayed measurement's expectations: measured against reproduced, both values in the
/// reason so a mismatch says what the sandbox did instead.
extension ExpectationJudge {
  static func checkReplay(_ expectation: ScenarioExpectation, outcome: ScenarioOutcome)
    -> (ExpectationStatus, String)
  {
    switch expectation {
    case .bootstrapStopsAt(let progress, let tag, let measured):
      let today = "\(progress)% \(tag)"
      let wanted =
        measured.map { $0 == today || $0.hasPrefix(today + ",") ? $0 : "\($0) = \(today)" }
        ?? today
      guard let furthest = outcome.torTimeline.furthestBootstrap else {
        return (.failed, "measured \(wanted), reproduced nothing: tor reported no bootstrap step")
      }
      let got = "\(furthest.progress ?? 0)% \(furthest.tag ?? "(no tag)")"
      if furthest.progress == progress, furthest.tag == tag {
        return (.met, "measured \(wanted), reproduced \(got)")
      }
      return (.failed, "measured \(wanted), reproduced \(got)")

    case .reachability(let targets, let reachable, let failure, let measured):
      let measuredText = measured.map { "measured \($0)" } ?? "planned"
      guard let probed = outcome.reachability else {
        return (.failed, "\(measuredText); the nodes were not probed in the sandbox")
      }
      let mine = probed.filter { $0.targetClass == targets }
      guard mine.count == targets.nodes.count else {
        return (
          .failed,
          "\(measuredText); \(mine.count) of \(targets.nodes.count) \(targets.rawValue) probed"
        )
      }
      let ok = mine.filter { $0.failure == nil }.count
      let failures = mine.compactMap { $0.failure }
      let sandbox =
        "sandbox \(ok)/\(mine.count) reachable"
        + (failures.isEmpty ? "" : " (" + Self.tally(failures) + ")")
      let planned = "planned \(reachable)/\(mine.count)" + (failure.map { " \($0)" } ?? "")
      if ok != reachable {
        return (.failed, "\(measuredText); \(planned); \(sandbox)")
      }
      if let failure, failures.contains(where: { $0 != failure }) {
        return (.failed, "\(measuredText); \(planned); \(sandbox)")
      }
      return (.met, "\(measuredText); \(sandbox)")

    default:
      return (.failed, "not a replay expectation")
    }
  }

  /// "2 generic_timeout_error, 1 eof_error".
  public static func tally(_ failures: [String]) -> String {
    var counts: [String: Int] = [:]
    for f in failures { counts[f, default: 0] += 1 }
    return counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(
      separator: ", ")
  }
}
