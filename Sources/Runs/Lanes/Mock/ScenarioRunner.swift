import FailClosedSupport
import Foundation
import Scenarios
import SystemUnderTest

/// Runs mock-lane scenarios (and, with a driver, the bitchat-source ones) through the lane
/// pipeline: per scenario it picks the lane (``MockLane``, or ``BitchatSourceMockLane`` when
/// bitchat's own code drives the app) and hands it to ``LanePipeline``.
public struct ScenarioRunner: Sendable {
  public struct Options: Sendable {
    /// The `failclosed` binary the device runs (`mock-tor`, `app`).
    public var executable: String
    /// Virtual seconds per real second: 75 s of bootstrap deadline in ~3 s.
    public var timeScale: Double
    /// Real seconds to keep capturing after the app has exited, before the end marker
    /// (``CaptureEndMarker``) closes the capture: the modelled app starts no process of its
    /// own, and what it sent is caught by the marker; 50 ms more cover a neighbour lookup the
    /// kernel still holds for its last packet on another address family than the marker's.
    public var grace: Double
    /// Where each scenario's files go (capture.pcap, app.jsonl, mock.jsonl); a temporary
    /// directory, removed afterwards, when nil.
    public var workDirectory: String?
    /// Called with each event as it happens (the app's, and the harness's crashes and censor
    /// changes), on the runner's thread: `replay` streams them, so an interrupted run still
    /// shows what happened up to then.
    public var onEvent: (@Sendable (ScenarioEvent) -> Void)?
    /// The bitchat-source lane's driver (BitchatSource), for `bitchat-source` scenarios; with
    /// `substituteBitchatSource` (leak-audit --sut bitchat-source) it also runs the `bitchat`
    /// scenarios (apple transport) and the naive-port canary (linux-foundation transport).
    public var bitchatSourceDriver: String?
    public var substituteBitchatSource = false
    /// The onion-browser-source lane's driver: Onion Browser scenarios run Onion Browser's own
    /// Tor layer (OnionBrowserSourceMockLane).
    public var onionBrowserSourceDriver: String?
    /// The mock lane's model on the event clock (``EventClock``: time stands still while
    /// anything works, jumps idle time; the default); false: a plain scaled clock
    /// (`--no-skip-idle`), on which a loaded machine can make a timer late.
    public var skipIdle = true

    public init(
      executable: String, timeScale: Double = 25, grace: Double = 0.05,
      workDirectory: String? = nil, onEvent: (@Sendable (ScenarioEvent) -> Void)? = nil,
      bitchatSourceDriver: String? = nil
    ) {
      self.executable = executable
      self.timeScale = timeScale
      self.grace = grace
      self.workDirectory = workDirectory
      self.onEvent = onEvent
      self.bitchatSourceDriver = bitchatSourceDriver
    }
  }

  public let options: Options

  public init(options: Options) { self.options = options }

  /// Runs `scenario`; never throws: a setup failure becomes an inconclusive outcome whose
  /// `runError` says what went wrong.
  public func run(_ scenario: Scenario) async -> ScenarioOutcome {
    let lane: any Lane
    do {
      lane = try Self.lane(for: scenario, options: options)
    } catch {
      return LanePipeline.setupFailed(error, started: SystemClock())
    }
    return await LanePipeline.run(
      scenario, on: lane,
      options: LanePipeline.Options(
        // A program may leave children that send after it ends: a second more of capture.
        grace: scenario.app.profile == .program ? max(options.grace, 1) : options.grace,
        skipIdle: options.skipIdle, onEvent: options.onEvent))
  }

  /// The lane `scenario` runs on: bitchat's own code when the driver is asked for, the mock
  /// lane's model otherwise.
  static func lane(for scenario: Scenario, options: Options) throws -> any Lane {
    let mock = MockLane(
      executable: options.executable, timeScale: options.timeScale,
      workDirectory: options.workDirectory)
    if scenario.app.profile == .program { return ProgramMockLane(mock: mock) }
    if let driver = options.onionBrowserSourceDriver, OnionBrowserSourceSystem.runs(scenario) {
      return OnionBrowserSourceMockLane(mock: mock, driver: driver)
    }
    if let transport = try ScenarioCommandLines.bitchatSourceTransport(
      scenario, driver: options.bitchatSourceDriver, substitute: options.substituteBitchatSource)
    {
      return BitchatSourceMockLane(
        mock: mock, driver: options.bitchatSourceDriver!, transport: transport)
    }
    return mock
  }

  /// The app's JSON lines; other lines (stderr shares the file) are returned apart.
  public static func readEvents(_ path: String) -> ([SystemUnderTest.AppEvent], [String]) {
    LanePipeline.readEvents(path)
  }

  public static func lastLines(_ path: String) -> String { LanePipeline.lastLines(path) }
}
