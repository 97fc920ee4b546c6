import Scenarios

/// A mock-lane run whose app is code that reads the wall clock from its own start and sleeps
/// on it (bitchat's, Onion Browser's): time 0 is the app's launch as the app sees it, the mock
/// keeps its own clock, and the app's deadlines drift (``ScenarioOutcome/timerDrift``).
class RealTimeAppMockLaneRun: MockLaneRun {
  override var clockSharing: RunClockSharing { .own }

  override func complete(_ outcome: inout ScenarioOutcome) {
    super.complete(&outcome)
    outcome.timerDrift = ScenarioOutcome.realTimeTimerDrift
  }
}
