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
///
/// Scenarios run side by side (``runAll(_:pcapPath:onResult:)``), one per slot: the sandbox's
/// own device and censor, and further pairs on the same world (``SandboxRun/createSlot(_:)``),
/// each with its own censor rules, capture, app and tor; a slot runs one scenario at a time.
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
    /// The onion-browser-source lane's driver: Onion Browser scenarios run Onion Browser's own
    /// Tor layer, its TorThread over Debian's tor.
    public var onionBrowserSourceDriver: String?

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
  /// The device and censor pairs scenarios run in: the sandbox's own first, then its slots.
  public private(set) var slots: [SandboxRun]
  let directory: String
  var trustAnchors: String { directory + "/world-ca.pem" }

  /// `directory` holds the network's files and each scenario's (`<name>-<id>/`).
  public init(sandbox: SandboxRun, directory: String, options: Options) {
    self.sandbox = sandbox
    self.directory = directory
    self.options = options
    slots = [sandbox]
    testnet = WorldTestnet(sandbox: sandbox, directory: directory + "/net")
  }

  /// Starts the world's services and the private network, and builds the slots so that
  /// `slots` scenarios can run side by side (the slots while the network starts); returns
  /// seconds to the network's readiness.
  public func start(slots count: Int = 1) async throws -> Double {
    let sandbox = self.sandbox
    let extra = max(0, min(count, AddressPlan.maximumSlots + 1) - 1)
    async let built: [SandboxRun] = BlockingIO.run("lane.slots") {
      try (0..<extra).map { try sandbox.createSlotBlocking($0 + 1) }
    }
    let ready = try await startNetwork()
    slots = [sandbox] + (try await built)
    return ready
  }

  /// Runs `scenarios` side by side, one per slot, the longest first (the library's wall time
  /// is then about its longest scenario's); `onResult` runs as each ends. Outcomes come back
  /// in the order given.
  public func runAll(
    _ scenarios: [Scenario], pcapPath: @escaping @Sendable (Scenario) -> String? = { _ in nil },
    onResult: @escaping @Sendable (Scenario, ScenarioOutcome) -> Void = { _, _ in }
  ) async -> [ScenarioOutcome] {
    let order = scenarios.indices.sorted {
      (scenarios[$0].duration, $1) > (scenarios[$1].duration, $0)
    }
    let queue = Locked(order[...])
    return await withTaskGroup(of: [(Int, ScenarioOutcome)].self) { group in
      for slot in slots.prefix(scenarios.count) {
        group.addTask {
          var done: [(Int, ScenarioOutcome)] = []
          while let index = queue.withLock({ $0.popFirst() }) {
            let scenario = scenarios[index]
            let outcome = await LateRunRetry.outcome(scenario) {
              await self.run(scenario, pcapPath: pcapPath(scenario), in: slot)
            }
            onResult(scenario, outcome)
            done.append((index, outcome))
          }
          return done
        }
      }
      var outcomes: [ScenarioOutcome?] = Array(repeating: nil, count: scenarios.count)
      for await finished in group {
        for (index, outcome) in finished { outcomes[index] = outcome }
      }
      return outcomes.map { $0! }
    }
  }

  /// Starts the world's services and the private network; returns seconds to readiness.
  func startNetwork() async throws -> Double {
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

  private let exitResolver = Locked<Bool>(false)

  /// A resolver on the world's loopback, which the network's exit falls back to (its torrc
  /// names no resolv.conf): names a program gives its tor (socks5h, RESOLVE) then resolve at
  /// the exit as the world's resolver answers. Started once, for the scenarios that need it
  /// (the program files); the model's and bitchat's real-lane runs keep the network as it was.
  func startExitResolver() throws {
    try exitResolver.withLock { started in
      guard !started else { return }
      try sandbox.startWorldLoopbackResolver()
      started = true
    }
  }

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

  /// Runs one real-tor scenario through the lane pipeline (a replayed OONI measurement on
  /// ``OONIReplayLane``, which probes the nodes first); never throws: a setup failure becomes
  /// an inconclusive outcome whose `runError` says what went wrong. `pcapPath` keeps the
  /// capture there.
  /// `slot` is the device and censor pair it runs in (default: the sandbox's own); one
  /// scenario at a time per slot.
  public func run(_ scenario: Scenario, pcapPath: String? = nil, in slot: SandboxRun? = nil)
    async -> ScenarioOutcome
  {
    await LanePipeline.run(
      scenario, on: lane(for: scenario, pcapPath: pcapPath, in: slot ?? sandbox),
      options: LanePipeline.Options(grace: options.grace))
  }

  /// The lane `scenario` runs on: the real-Tor lane, or the OONI replay lane when the
  /// scenario expects the nodes' reachability (a replayed measurement).
  func lane(for scenario: Scenario, pcapPath: String?, in slot: SandboxRun) -> any Lane {
    let real = RealTorLane(runner: self, sandbox: slot, pcapPath: pcapPath)
    if scenario.expectations.contains(where: { $0.kind == "reachability" }) {
      return OONIReplayLane(real: real)
    }
    return real
  }

  /// Whether the app's events already show tor at 100%: its controller's report, or
  /// TorManager's progress.
  static func appReportedDone(_ path: String) -> Bool {
    LanePipeline.readEvents(path).0.contains { event in
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
