import BitchatSource
import FailClosedSupport
import Scenarios

/// The bitchat-source lane on the mock side: the mock lane's sandbox, mock Tor (the arti
/// personality) and capture, with bitchat's own code (the driver built by BitchatSource) as
/// the app. bitchat's code reads the wall clock: its scenarios run in real time.
public struct BitchatSourceMockLane: Lane {
  public var mock: MockLane
  /// The driver built from a bitchat checkout.
  public var driver: String
  /// `apple` (the project's URLSession with Apple's proxy semantics) or `linux-foundation`
  /// (stock swift-corelibs, the canary).
  public var transport: BitchatSourceTransport

  public init(mock: MockLane, driver: String, transport: BitchatSourceTransport) {
    var mock = mock
    mock.timeScale = 1
    self.mock = mock
    self.driver = driver
    self.transport = transport
  }

  public func begin(_ scenario: Scenario) throws -> any LaneRun {
    try BitchatSourceMockLaneRun(scenario, lane: mock, driver: driver, transport: transport)
  }
}

final class BitchatSourceMockLaneRun: RealTimeAppMockLaneRun {
  let driver: String
  let transport: BitchatSourceTransport

  init(
    _ scenario: Scenario, lane: MockLane, driver: String, transport: BitchatSourceTransport
  ) throws {
    self.driver = driver
    self.transport = transport
    try super.init(scenario, lane: lane)
  }

  override func appCommand(actionsFile: String, stateDirectory: String) -> [String] {
    ScenarioCommandLines.bitchatSourceApp(
      driver: driver, transport: transport, actionsFile: actionsFile,
      stateDirectory: stateDirectory, trustAnchors: trustAnchors,
      bootstrapEndOrder: scenario.tor.mock?.bootstrapEndOrder)
  }
}
