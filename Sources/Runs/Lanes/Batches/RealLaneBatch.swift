import Sandbox
import Scenarios

/// The real-Tor lane's set-up: one sandbox and one private network for every real scenario,
/// `jobs` of them side by side (each in a slot of the sandbox: its own device and censor on
/// the network's world), the longest first; the network and the sandbox are torn down however
/// this ends (SIGINT and SIGTERM through the sandbox's signal teardown). If the network does
/// not start, every real scenario is inconclusive with the reason.
public enum RealLaneBatch {
  /// What the batch tells its caller, as it happens.
  public enum Progress: Sendable {
    case starting
    /// The network is ready after `seconds`, with `slots` scenarios side by side.
    case networkReady(seconds: Double, slots: Int)
    case result(ScenarioResult)
    /// The lane could not run (the remaining scenarios are inconclusive with this reason).
    case failed(String)
  }

  public static func run(
    _ scenarios: [Scenario], executable: String, directory: String, jobs: Int,
    bitchatSourceDriver: String? = nil, onionBrowserSourceDriver: String? = nil,
    progress: @escaping @Sendable (Progress) -> Void = { _ in }
  ) async -> (results: [ScenarioResult], networkReadySeconds: Double?) {
    progress(.starting)
    var results: [ScenarioResult] = []
    var ready: Double?
    do {
      try await withSandbox { sandbox in
        let runner = RealLaneRunner(
          sandbox: sandbox, directory: directory,
          options: {
            var options = RealLaneRunner.Options(
              executable: executable, bitchatSourceDriver: bitchatSourceDriver)
            options.onionBrowserSourceDriver = onionBrowserSourceDriver
            return options
          }())
        defer { runner.stop() }
        let seconds: Double
        do {
          seconds = try await runner.start(slots: min(jobs, scenarios.count))
        } catch {
          throw RealLaneSetupError(message: "the private Tor network did not start: \(error)")
        }
        ready = seconds
        progress(.networkReady(seconds: seconds, slots: runner.slots.count))
        let outcomes = await runner.runAll(
          scenarios, pcapPath: { directory + "/pcaps/\($0.name).pcap" },
          onResult: { scenario, outcome in
            progress(.result(ScenarioResult(scenario: scenario, outcome: outcome)))
          })
        results = zip(scenarios, outcomes).map { ScenarioResult(scenario: $0, outcome: $1) }
      }
    } catch {
      progress(.failed("\(error)"))
      for scenario in scenarios.dropFirst(results.count) {
        let outcome = ScenarioOutcome(
          audit: CaptureAudit(verdict: .inconclusive, inconclusiveReasons: ["\(error)"]),
          capture: CaptureStats(packets: 0, dropped: 0, positiveControlSeen: false),
          runError: "\(error)")
        results.append(ScenarioResult(scenario: scenario, outcome: outcome))
      }
    }
    return (results, ready)
  }
}

/// The private network could not be set up; every real scenario is inconclusive.
struct RealLaneSetupError: Error, CustomStringConvertible {
  let message: String
  var description: String { message }
}
