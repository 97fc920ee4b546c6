import Scenarios

/// The mock lane's scheduler: scenarios `jobs` at a time through one ``ScenarioRunner``, the
/// longest first; a run the harness made late runs again (``LateRunRetry``).
public enum MockLaneBatch {
  /// Runs `scenarios`, telling `onResult` of each as it finishes (on the finishing task);
  /// the results come back in the given order.
  public static func run(
    _ scenarios: [Scenario], runner: ScenarioRunner, jobs: Int,
    onResult: @escaping @Sendable (ScenarioResult) -> Void = { _ in }
  ) async -> [ScenarioResult] {
    let count = scenarios.count
    // The longest first, so the last to finish is not a long one started late.
    let order = scenarios.indices.sorted {
      (scenarios[$0].duration, $1) > (scenarios[$1].duration, $0)
    }
    return await withTaskGroup(of: (Int, ScenarioResult).self) { group in
      var next = 0
      var results: [ScenarioResult?] = Array(repeating: nil, count: count)
      func launch() {
        guard next < count else { return }
        let index = order[next]
        let scenario = scenarios[index]
        next += 1
        group.addTask {
          let outcome = await LateRunRetry.outcome(scenario) { await runner.run(scenario) }
          let result = ScenarioResult(scenario: scenario, outcome: outcome)
          onResult(result)
          return (index, result)
        }
      }
      for _ in 0..<min(jobs, count) { launch() }
      for await (index, result) in group {
        results[index] = result
        launch()
      }
      return results.compactMap { $0 }
    }
  }
}
