import Audit
import Capture
import FailClosedSupport
import Foundation
import Sandbox
import Scenarios
import SystemUnderTest
import Testnet

/// Runs real-tor scenarios in one sandbox: the private network starts once in the world, then
/// each scenario gets its censor rules (the network's own relays and bridge as targets), a
/// fresh capture on the device link (allowlist: the consensus' relays and the bridge), and the
/// app in the device with `--backend tor`: it starts Debian's tor itself and drives it through
/// the control port, in real time. tor's timeline comes from the app's `tor` events and from
/// tor's logs; a fetch through the exit once tor reports 100%.
public final class RealLaneRunner: @unchecked Sendable {
  public struct Options: Sendable {
    /// The `failclosed` binary the device runs as `app`.
    public var executable: String
    /// Real seconds to keep capturing after the app has exited.
    public var grace: Double
    /// Slack over a scenario's duration before the app is killed (tor's start-up included).
    public var slack: Double
    /// The bitchat-source lane's driver: `bitchat-source` scenarios run bitchat's own code,
    /// its arti.h over Debian's tor.
    public var bitchatSourceDriver: String?

    public init(
      executable: String, grace: Double = 1, slack: Double = 45,
      bitchatSourceDriver: String? = nil
    ) {
      self.executable = executable
      self.grace = grace
      self.slack = slack
      self.bitchatSourceDriver = bitchatSourceDriver
    }
  }

  public let sandbox: SandboxRun
  public let testnet: WorldTestnet
  public let options: Options
  let directory: String
  private var trustAnchors: String { directory + "/world-ca.pem" }

  /// `directory` holds the network's files and each scenario's (`<name>-<id>/`).
  public init(sandbox: SandboxRun, directory: String, options: Options) {
    self.sandbox = sandbox
    self.directory = directory
    self.options = options
    testnet = WorldTestnet(sandbox: sandbox, directory: directory + "/net")
  }

  /// Starts the world's services and the private network; returns seconds to readiness.
  public func start() async throws -> Double {
    let sandbox = self.sandbox
    let directory = self.directory
    let anchors = trustAnchors
    try await BlockingIO.run("lane.world") {
      try FileManager.default.createDirectory(
        atPath: directory, withIntermediateDirectories: true)
      let world = try sandbox.startWorld()
      try world.authority.writeRootCertificate(to: anchors)
    }
    try await testnet.start()
    return testnet.readySeconds
  }

  /// Stops every tor of the network (the sandbox's teardown would too).
  public func stop() { testnet.stop() }

  /// The network's endpoints for the `tor-relays` and `tor-bridge` targets.
  public func targets() throws -> SandboxMapping.RealTorTargets {
    let relays = try testnet.network.currentConsensus()?.endpoints.compactMap(SocketAddress.init)
    let bridge = try testnet.network.bridgeLine().flatMap {
      SocketAddress(host: $0.host, port: $0.port)
    }
    return SandboxMapping.RealTorTargets(
      relays: relays ?? [], bridges: bridge.map { [$0] } ?? [],
      nodes: RealLaneRunner.nodeEndpoints(testnet.network.plan))
  }

  /// Each node's endpoint by censor target name: "testnet-auth1-orport", "-dirport",
  /// "testnet-exit1-orport", "testnet-bridge1-obfs4" (``RealTorTargetClass``).
  static func nodeEndpoints(_ plan: TestnetPlan) -> [String: SocketAddress] {
    var result: [String: SocketAddress] = [:]
    for node in plan.nodes {
      if node.role == .bridge {
        if let port = node.obfs4Port {
          result["testnet-\(node.name)-obfs4"] = SocketAddress(host: node.address, port: port)
        }
        continue
      }
      result["testnet-\(node.name)-orport"] = SocketAddress(host: node.address, port: node.orPort)
      if let port = node.dirPort {
        result["testnet-\(node.name)-dirport"] = SocketAddress(host: node.address, port: port)
      }
    }
    return result
  }

  /// Runs one real-tor scenario; never throws: a setup failure becomes an inconclusive outcome
  /// whose `runError` says what went wrong. `pcapPath` keeps the capture there.
  public func run(_ scenario: Scenario, pcapPath: String? = nil) async -> ScenarioOutcome {
    let started = Date()
    do {
      return try await BlockingIO.run("lane.\(scenario.name)") {
        try self.runBlocking(scenario, pcapPath: pcapPath)
      }
    } catch {
      return ScenarioOutcome(
        audit: CaptureAudit(verdict: .inconclusive, inconclusiveReasons: ["\(error)"]),
        capture: CaptureStats(packets: 0, dropped: 0, positiveControlSeen: false),
        runError: "\(error)", wallSeconds: Date().timeIntervalSince(started))
    }
  }

  func runBlocking(_ scenario: Scenario, pcapPath: String?) throws -> ScenarioOutcome {
    guard let plan = scenario.tor.real else {
      throw ScenarioError(
        file: scenario.path, path: "lane", message: "a mock-lane scenario: ScenarioRunner runs it")
    }
    let wallStart = Date()
    let work = directory + "/\(scenario.name)-\(UUID().uuidString.prefix(8))"
    let state = work + "/state"
    try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)

    let targets = try self.targets()
    try sandbox.applyCensorRules(SandboxMapping.censorRules(scenario.network, at: 0, real: targets))
    // A replayed measurement: probe each node as OONI probed its targets, before the capture
    // opens (the probe is the harness's traffic, not the app's).
    var reachability: [ReachabilityResult]?
    if scenario.expectations.contains(where: { $0.kind == "reachability" }) {
      let nodes = RealTorTargetClass.allCases.flatMap { cls in
        cls.nodes.compactMap { name in targets.nodes[name].map { (name, cls, $0) } }
      }
      reachability = ReachabilityProbe.probe(nodes, in: sandbox.device)
    }
    let allowed = Set(try testnet.allowlist().map(Endpoint.init))
    let capturePath = pcapPath ?? work + "/capture.pcap"
    try FileManager.default.createDirectory(
      atPath: (capturePath as NSString).deletingLastPathComponent,
      withIntermediateDirectories: true)
    let capture = try sandbox.openDeviceCapture(allowed: allowed, pcapPath: capturePath)
    var captureStopped = false
    defer { if !captureStopped { _ = capture.stop() } }

    var bridgeLines: [RealTorPlan.Bridge: String] = [:]
    if plan.bridges.contains(.testnetObfs4) {
      guard let line = try testnet.network.bridgeLine() else {
        throw ScenarioError(
          file: scenario.path, path: "tor.bridges", message: "the network has no obfs4 bridge")
      }
      bridgeLines[.testnetObfs4] = line.text
    }
    let torrcBase = work + "/torrc-base"
    try testnet.network.builder.clientBase.write(
      toFile: torrcBase, atomically: true, encoding: .utf8)
    try ScenarioCommandLines.actionsFile(scenario).write(
      toFile: work + "/actions.jsonl", atomically: true, encoding: .utf8)
    try ScenarioCommandLines.preferences(scenario, bridgeLines: bridgeLines).write(
      toFile: state + "/preferences.json", atomically: true, encoding: .utf8)
    try ScenarioCommandLines.directoryCache().write(
      toFile: state + "/" + GeoRelayDirectory.cacheFileName, atomically: true, encoding: .utf8)

    let clock = SystemClock()
    let origin = clock.now
    let runStart = Date().timeIntervalSince1970
    let appOutput = work + "/app.jsonl"
    let sourceTransport = try ScenarioCommandLines.bitchatSourceTransport(
      scenario, driver: options.bitchatSourceDriver, substitute: false)
    let app = try DeviceCommand(
      sourceTransport.map {
        ScenarioCommandLines.bitchatSourceApp(
          driver: options.bitchatSourceDriver!, transport: $0,
          actionsFile: work + "/actions.jsonl", stateDirectory: state,
          trustAnchors: trustAnchors, torrcBase: torrcBase)
      }
        ?? ScenarioCommandLines.app(
          scenario, executable: options.executable, timeScale: 1,
          actionsFile: work + "/actions.jsonl", stateDirectory: state,
          trustAnchors: trustAnchors, torrcBase: torrcBase),
      in: sandbox, output: appOutput)
    defer { app.killTree() }
    let logs = TorLogWatcher(directory: state + "/tor", clock: clock, origin: origin)
    let fetcher = ExitFetcher()

    // Censor changes over real time; the app ends itself after the scenario's duration.
    var changes = SandboxMapping.changeTimes(scenario.network)
    let deadline = scenario.duration + options.slack
    var appStatus: Int32?
    var lastPoll = -1.0
    while appStatus == nil && clock.now - origin < deadline {
      let now = clock.now - origin
      while let next = changes.first, next <= now {
        changes.removeFirst()
        try sandbox.applyCensorRules(
          SandboxMapping.censorRules(scenario.network, at: next, real: targets))
      }
      if now - lastPoll >= 0.25 {
        lastPoll = now
        let logged = logs.poll()
        if !fetcher.hasStarted,
          logged.contains(where: { $0.isBootstrap && $0.progress! >= 100 })
            || RealLaneRunner.appReportedDone(appOutput)
        {
          fetcher.start(device: sandbox.device.name)
        }
      }
      appStatus = ScenarioRunner.exitStatus(app.pid)
      if appStatus == nil { usleep(20_000) }
    }
    var runError: String?
    if appStatus == nil {
      runError = "the app did not finish within \(Int(deadline)) s (killed)"
    } else if appStatus != 0 {
      runError = "the app exited with status \(appStatus!): " + ScenarioRunner.lastLines(appOutput)
    }
    let fetched = fetcher.wait(seconds: 45)
    // Keep capturing for the grace period: a late leak is still caught.
    usleep(UInt32(max(0, options.grace) * 1_000_000))
    app.killTree()
    let report = capture.stop()
    captureStopped = true
    let logged = logs.poll()

    let (events, parseErrors) = ScenarioRunner.readEvents(appOutput)
    if runError == nil, !parseErrors.isEmpty {
      runError =
        "the app printed lines that are not events: "
        + parseErrors.prefix(3).joined(separator: " | ")
    }
    var outcome = ScenarioOutcome(
      appEvents: events, audit: report, runStart: runStart, timeScale: 1,
      pcapPath: pcapPath, runError: runError, wallSeconds: Date().timeIntervalSince(wallStart))
    outcome.torTimeline = TorTimelineEntry.merged(outcome.torTimeline, logged)
    outcome.fetchThroughExit = fetched
    outcome.reachability = reachability
    return outcome
  }

  /// Whether the app's events already show tor at 100%: its controller's report, or
  /// TorManager's progress.
  static func appReportedDone(_ path: String) -> Bool {
    ScenarioRunner.readEvents(path).0.contains { event in
      let progress = Int(event["progress"]?.description ?? "") ?? 0
      if event.kind == .tor, event["phase"]?.description == "bootstrap", progress >= 100 {
        return true
      }
      return event.kind == .state && event["component"]?.description == "tor"
        && event["field"]?.description == "bootstrapProgress"
        && event["value"]?.description == "100"
    }
  }
}
