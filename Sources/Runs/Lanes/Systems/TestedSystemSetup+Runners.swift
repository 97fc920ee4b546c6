import Scenarios

/// What a setup gives the lanes' runners, in one place: leak-audit, replay and --compare all
/// hand a setup over here, so a system's new driver is one more line here, not one in each.
extension TestedSystemSetup {
  /// The mock lane's runner options for this setup's drivers.
  public func mockRunnerOptions(
    executable: String, timeScale: Double, workDirectory: String?,
    onEvent: (@Sendable (ScenarioEvent) -> Void)? = nil
  ) -> ScenarioRunner.Options {
    var options = ScenarioRunner.Options(
      executable: executable, timeScale: timeScale, workDirectory: workDirectory,
      onEvent: onEvent, bitchatSourceDriver: bitchatSourceDriver)
    options.substituteBitchatSource = substituteBitchatSource
    options.onionBrowserSourceDriver = onionBrowserSourceDriver
    return options
  }

  /// The real-Tor lane's batch (``RealLaneBatch``) with this setup's drivers.
  public func runRealLane(
    _ scenarios: [Scenario], executable: String, directory: String, jobs: Int,
    progress: @escaping @Sendable (RealLaneBatch.Progress) -> Void = { _ in }
  ) async -> (results: [ScenarioResult], networkReadySeconds: Double?) {
    await RealLaneBatch.run(
      scenarios, executable: executable, directory: directory, jobs: jobs,
      bitchatSourceDriver: bitchatSourceDriver, onionBrowserSourceDriver: onionBrowserSourceDriver,
      progress: progress)
  }
}
