import FailClosedSupport
import Scenarios

/// The onion-browser-source lane on the mock side: the mock lane's sandbox, mock Tor (the ctor
/// personality with its control port) and capture, with Onion Browser's own Tor layer (the
/// driver built by OnionBrowserSourceBuilder) as the app, in real time.
public struct OnionBrowserSourceMockLane: Lane {
  public var mock: MockLane
  public var driver: String

  public init(mock: MockLane, driver: String) {
    var mock = mock
    mock.timeScale = 1
    self.mock = mock
    self.driver = driver
  }

  public func begin(_ scenario: Scenario) throws -> any LaneRun {
    try OnionBrowserSourceMockLaneRun(scenario, lane: mock, driver: driver)
  }
}

final class OnionBrowserSourceMockLaneRun: RealTimeAppMockLaneRun {
  let driver: String

  init(_ scenario: Scenario, lane: MockLane, driver: String) throws {
    self.driver = driver
    try super.init(scenario, lane: lane)
  }

  override func appCommand(actionsFile: String, stateDirectory: String) -> [String] {
    ScenarioCommandLines.onionBrowserSourceApp(
      driver: driver, actionsFile: actionsFile, stateDirectory: stateDirectory,
      trustAnchors: trustAnchors)
  }
}
