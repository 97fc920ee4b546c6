/// Findings in bitchat's own code that a library scenario shows on the bitchat-source lane
/// (docs/bitchat-source.md, "Findings"). The lane reports such a run as it is (FAILED); this
/// names the finding when the run carries its signature, and says so when a failure does not.
public enum BitchatSourceFindings {
  public struct Finding: Sendable, Equatable {
    public let scenario: String
    public let title: String
    /// Whether a run's events carry this finding's trace.
    public let signature: @Sendable ([ScenarioEvent]) -> Bool

    public static func == (a: Finding, b: Finding) -> Bool { a.scenario == b.scenario }
  }

  /// lib.rs keeps IS_RUNNING and BOOTSTRAP_PROGRESS global, and a bootstrap pending at
  /// arti_stop goes on: when it ends after the restarted instance's, its exit stores "not
  /// running, progress 0" over the new instance, which TorManager then reads. Trace: after
  /// TorWillRestart, the summary goes to "Shutting down..." or "Error: ..." (the old task
  /// ending) while the new instance should be bootstrapping or ready.
  public static let restartRace = Finding(
    scenario: "path-change-and-restart",
    title:
      "lib.rs's restart race: the bootstrap pending at the restart ended last and reset the new "
      + "instance's progress to 0; bitchat never became ready (fails closed, nothing leaked)",
    signature: { events in
      guard let restart = events.firstIndex(where: { $0.name == "TorWillRestart" }) else {
        return false
      }
      return events[restart...].contains { event in
        guard event.name == "tor.bootstrapSummary", let value = event.fields["value"] else {
          return false
        }
        return value == "Shutting down..." || value.hasPrefix("Error: ")
      }
    })

  public static let all = [restartRace]

  /// A line for a result on the bitchat-source lane that failed where a finding is known: the
  /// finding when the run carries its trace, or that it failed without it (a new fault).
  public static func note(_ result: ScenarioResult) -> String? {
    guard result.scenario.app.profile == .bitchatSource, result.verdict == .failed,
      let finding = all.first(where: { $0.scenario == result.scenario.name })
    else { return nil }
    if finding.signature(result.outcome.events) {
      return "\(result.scenario.name): known finding in bitchat's code: \(finding.title) "
        + "(docs/bitchat-source.md)"
    }
    return "\(result.scenario.name): FAILED without the trace of the known finding "
      + "(\(finding.title)): look at it as a new fault"
  }
}
