import Audit
import BitchatSource
import FailClosedSupport
import Foundation
import Sandbox
import Scenarios
import Testnet

/// The real-Tor lane: one of the runner's slots (a device and censor pair on the world where
/// the private network already runs); per scenario the censor's rules name the network's own relays and bridge, the
/// capture allows the consensus' relays and the bridge, and the app in the device starts
/// Debian's tor itself (`--backend tor`) and drives it through the control port, in real
/// time. tor's timeline comes from the app's `tor` events and from tor's logs; a fetch
/// through the exit once tor reports 100%.
public struct RealTorLane: Lane {
  let runner: RealLaneRunner
  /// The device and censor pair the scenario runs in: the runner's sandbox or one of its slots.
  let sandbox: SandboxRun
  /// Where the capture is kept (nil: in the scenario's directory, not named in reports).
  public var pcapPath: String?

  public init(runner: RealLaneRunner, sandbox: SandboxRun? = nil, pcapPath: String? = nil) {
    self.runner = runner
    self.sandbox = sandbox ?? runner.sandbox
    self.pcapPath = pcapPath
  }

  public func begin(_ scenario: Scenario) throws -> any LaneRun {
    if scenario.app.profile == .program {
      guard let program = scenario.app.program else {
        throw ScenarioError(
          file: scenario.path, path: "app.program",
          message: "a program scenario needs its command: leak-audit --app -- CMD, or app.program")
      }
      return try ProgramRealLaneRun(scenario, lane: self, program: program)
    }
    return try RealTorLaneRun(scenario, lane: self)
  }
}

/// One scenario on the real-Tor lane. The app alone takes part in the epoch hand-over
/// (``EpochHandOver``): it starts Debian's tor itself, so it is the whole Tor side; the run's
/// time 0 follows once it has said ready (at least 0.25 s later) instead of a fixed 1 s lead.
/// bitchat's own code keeps its own clock and gets none.
class RealTorLaneRun: LaneRun {
  let scenario: Scenario
  let plan: RealTorPlan
  let lane: RealTorLane
  let workDirectory: String
  let targets: SandboxMapping.RealTorTargets
  private var logs: TorLogWatcher?
  private let fetcher = ExitFetcher()
  private var fetched: Bool?
  private var lastPoll = -1.0
  /// Set when the scenario runs bitchat's own code (its arti.h over Debian's tor).
  private var sourceTransport: BitchatSourceTransport?
  /// Onion Browser's own Tor layer runs the app (onion-browser-source).
  private var onionBrowserDriver: String?
  /// tor reported 100% (its log, or the app).
  private var torDone = false

  var runner: RealLaneRunner { lane.runner }
  var sandbox: SandboxRun { lane.sandbox }
  var trustAnchors: String { runner.trustAnchors }
  var capturePath: String { lane.pcapPath ?? workDirectory + "/capture.pcap" }
  var keptPcapPath: String? { lane.pcapPath }
  var timeScale: Double { 1 }
  /// bitchat's own code reads the wall clock from its own start: its time 0 is its launch.
  var clockSharing: RunClockSharing {
    sourceTransport == nil && onionBrowserDriver == nil ? .handOver : .own
  }
  var deadline: Double { scenario.duration + runner.options.slack }

  init(_ scenario: Scenario, lane: RealTorLane) throws {
    guard let plan = scenario.tor.real else {
      throw ScenarioError(
        file: scenario.path, path: "lane", message: "a mock-lane scenario: ScenarioRunner runs it")
    }
    self.scenario = scenario
    self.plan = plan
    self.lane = lane
    workDirectory = lane.runner.directory + "/\(scenario.name)-\(UUID().uuidString.prefix(8))"
    try FileManager.default.createDirectory(
      atPath: workDirectory + "/state", withIntermediateDirectories: true)
    targets = try lane.runner.targets()
    if let driver = lane.runner.options.onionBrowserSourceDriver,
      OnionBrowserSourceSystem.runs(scenario)
    {
      onionBrowserDriver = driver
    }
    sourceTransport = try ScenarioCommandLines.bitchatSourceTransport(
      scenario, driver: lane.runner.options.bitchatSourceDriver, substitute: false)
    try FileManager.default.createDirectory(
      atPath: ((lane.pcapPath ?? workDirectory + "/capture.pcap") as NSString)
        .deletingLastPathComponent,
      withIntermediateDirectories: true)
  }

  func censorRules(at t: Double) -> [Sandbox.CensorRule] {
    SandboxMapping.censorRules(scenario.network, at: t, real: targets)
  }

  /// Nothing before the capture on a plain real-Tor run (``OONIReplayLane`` probes there).
  func beforeCapture() throws {}

  func captureAllows() throws -> AllowedEndpoints {
    try runner.testnet.allowlist()
  }

  /// The scenario's bridges as the network's bridge lines, seeded into the app's settings.
  func preferences() throws -> String {
    var bridgeLines: [RealTorPlan.Bridge: String] = [:]
    if plan.bridges.contains(.testnetObfs4) {
      guard let line = try runner.testnet.network.bridgeLine() else {
        throw ScenarioError(
          file: scenario.path, path: "tor.bridges", message: "the network has no obfs4 bridge")
      }
      bridgeLines[.testnetObfs4] = line.text
    }
    return ScenarioCommandLines.preferences(scenario, bridgeLines: bridgeLines)
  }

  /// The app starts Debian's tor itself: here only its base torrc (the network's
  /// authorities). With the run's time 0 handed over once the app is ready, tor's log is
  /// watched from the first poll, whose elapsed time gives the epoch; on the app's own clock
  /// (bitchat's code), from now.
  func startTorSide(handOver: EpochHandOver?, clockPage: String?) throws {
    try runner.testnet.network.builder.clientBase.write(
      toFile: workDirectory + "/torrc-base", atomically: true, encoding: .utf8)
    if handOver == nil { watchLogs(epoch: .now) }
  }

  private func watchLogs(epoch: MonotonicInstant) {
    let clock = ScaledClock(factor: 1, epoch: epoch)
    logs = TorLogWatcher(directory: workDirectory + "/state/tor", clock: clock, origin: 0)
  }

  func appCommand(actionsFile: String, stateDirectory: String) -> [String] {
    if let onionBrowserDriver {
      return ScenarioCommandLines.onionBrowserSourceApp(
        driver: onionBrowserDriver, actionsFile: actionsFile, stateDirectory: stateDirectory,
        trustAnchors: trustAnchors, torrcBase: workDirectory + "/torrc-base")
    }
    if let sourceTransport, let driver = runner.options.bitchatSourceDriver {
      return ScenarioCommandLines.bitchatSourceApp(
        driver: driver, transport: sourceTransport, actionsFile: actionsFile,
        stateDirectory: stateDirectory, trustAnchors: trustAnchors,
        torrcBase: workDirectory + "/torrc-base")
    }
    return ScenarioCommandLines.app(
      scenario, executable: runner.options.executable, timeScale: 1, actionsFile: actionsFile,
      stateDirectory: stateDirectory, trustAnchors: trustAnchors,
      torrcBase: workDirectory + "/torrc-base")
  }

  /// Every quarter second: tor's log read, and the fetch through the exit started once tor
  /// (its log, or the app's controller) reports 100%.
  func poll(elapsed: Double, appOutput: String) {
    if logs == nil { watchLogs(epoch: MonotonicInstant.now.advanced(bySeconds: -elapsed)) }
    guard elapsed - lastPoll >= 0.25, let logs else { return }
    lastPoll = elapsed
    let logged = logs.poll()
    if logged.contains(where: { $0.isBootstrap && $0.progress! >= 100 })
      || (!torDone && RealLaneRunner.appReportedDone(appOutput))
    {
      torDone = true
    }
    guard !fetcher.hasStarted, torDone else { return }
    if onionBrowserDriver != nil, OnionBrowserSourceSystem.version(of: scenario) == .v3 {
      // 3.X's tor has `SocksPort auto` (TorManager.swift l.315): the fetch goes to the port
      // the app's code read from GETINFO net/listeners/socks, once it has.
      if let port = Self.reportedSocksPort(appOutput) {
        fetcher.start(device: sandbox.device.name, socksPort: port)
      }
    } else {
      fetcher.start(device: sandbox.device.name)
    }
  }

  /// The SOCKS port in the app's `socks` event ("127.0.0.1:PORT"), if any.
  static func reportedSocksPort(_ path: String) -> Int? {
    LanePipeline.readEvents(path).0.last { event in
      event.kind == .tor && event["phase"]?.description == "socks"
    }.flatMap { $0["detail"]?.description.split(separator: ":").last.flatMap { Int($0) } }
  }

  func appEnded(runError: String?, appOutput: String) -> String? {
    fetched = fetcher.wait(seconds: 45)
    return runError
  }

  func complete(_ outcome: inout ScenarioOutcome) {
    let logged = logs?.poll() ?? []
    outcome.torTimeline = TorTimelineEntry.merged(outcome.torTimeline, logged)
    outcome.fetchThroughExit = fetched
    // bitchat's code sleeps on the wall clock: its deadlines drift (the model's run clock does
    // not; neither do tor's own timers, which the expectations read from its log).
    if sourceTransport != nil || onionBrowserDriver != nil {
      outcome.timerDrift = ScenarioOutcome.realTimeTimerDrift
    }
  }

  /// The app stops the tor it started (a subclass that starts one stops it here).
  func stopTorSide() {}

  /// The slot and the network are the runner's: they outlive the scenario, and so would the
  /// world's side of the scenario's connections (a relay keeps one whose client left behind a
  /// drop rule, and its keepalive reaches the next scenario's device): they end with it.
  func tearDown() {
    do {
      try sandbox.closeWorldConnections()
    } catch {
      FileHandle.standardError.write(Data("failclosed: \(error)\n".utf8))
    }
  }
}
