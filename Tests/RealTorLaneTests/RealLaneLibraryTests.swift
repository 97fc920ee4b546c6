import Audit
import FailClosedSupport
import Foundation
import OONI
import Sandbox
import Scenarios
import TestSupport
import Testing
import Testnet

@testable import Lanes

/// Scenarios/, found from this file's path (Tests/RealTorLaneTests/...).
let scenariosDirectory = repositoryRoot + "/Scenarios"

/// The real-lane scenario files through the runner, side by side in one private network (each
/// in a slot of its own: device, censor, capture, app, tor): the app starts Debian's tor in the
/// device and drives it; the healthy control bootstraps and fetches through the exit, every
/// censored case stalls where real tor stalls, the hardened bridge gets around the block,
/// bitchat's gap shows, and no case leaks. A canary (the naive-port app on the healthy
/// network) runs among them and must be caught leaking, or the passes mean nothing; its leak
/// must show in its own slot's report only, and the healthy case must reach 100% while a
/// censor that drops every relay runs in another slot (slots are isolated).
@Suite(.serialized, .needsRoot)
struct RealLaneLibraryTests {
  /// Scenarios side by side, as `leak-audit`'s default on two cores (FC_LANE_JOBS=N
  /// overrides; 1 runs them in turn, in one slot, as before slots).
  static let jobs = Int(ProcessInfo.processInfo.environment["FC_LANE_JOBS"] ?? "") ?? 6

  @Test func everyRealLaneScenarioPassesSideBySideAndTheCanaryIsCaughtInItsSlotOnly()
    async throws
  {
    let base = NSTemporaryDirectory() + "fc-lane-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    defer { try? FileManager.default.removeItem(atPath: base) }
    var scenarios: [Scenario] = []
    // The library's real-tor scenarios, then the replayed OONI measurements (Scenarios/ooni),
    // in the same private network.
    for file in try ScenarioLoader.scenarioFiles(in: scenariosDirectory)
      + ScenarioLoader.scenarioFiles(in: scenariosDirectory + "/ooni")
    {
      let scenario = try ScenarioLoader.loadFile(file).get()
      if scenario.lane == .realTor { scenarios.append(scenario) }
    }
    // FC_LANE_CASE=TEXT runs only the scenarios whose name contains TEXT (when debugging one).
    let only = ProcessInfo.processInfo.environment["FC_LANE_CASE"] ?? ""
    scenarios = scenarios.filter { only.isEmpty || $0.name.contains(only) }
    let canary = try Self.canary()
    let withCanary = only.isEmpty || canary.name.contains(only)
    #expect(
      !scenarios.isEmpty || withCanary, "FC_LANE_CASE=\(only) matches no real-lane scenario")
    // The canary, the healthy case and the one dropping every relay first among equals (the
    // runner starts the longest first, then in the order given): they run side by side.
    let pair = ["real-healthy", "real-relays-dropped"]
    scenarios =
      scenarios.filter { pair.contains($0.name) } + scenarios.filter { !pair.contains($0.name) }
    let all = (withCanary ? [canary] : []) + scenarios
    try await withSandbox { sandbox in
      let runner = RealLaneRunner(
        sandbox: sandbox, directory: base, options: .init(executable: FailclosedBinary.path))
      defer { runner.stop() }
      let wall = SystemClock()
      let ready = try await runner.start(slots: Self.jobs)
      print("lane: network ready in \(ready) s, \(runner.slots.count) slots")
      // Each scenario's span on one clock, to know which ran side by side.
      let spans = Locked<[String: ClosedRange<Double>]>([:])
      let ran = await runner.runAll(
        all,
        onResult: { scenario, outcome in
          let end = wall.now
          spans.withLock { $0[scenario.name] = (end - outcome.wallSeconds)...end }
          let result = ScenarioResult(scenario: scenario, outcome: outcome)
          let done = outcome.torTimeline.first { $0.isBootstrap && $0.progress! >= 100 }
          print(
            "lane: \(scenario.name) \(result.verdict.rawValue) in \(outcome.wallSeconds) s, "
              + "furthest \(outcome.torTimeline.furthestBootstrap?.line ?? "-"), "
              + "100% at \(done.map { "\($0.time) s (\($0.source.rawValue))" } ?? "-")")
        })
      print("lane: \(all.count) scenarios in \(wall.now) s wall, network start included")
      let outcomes = Array(ran.suffix(scenarios.count))
      for (scenario, outcome) in zip(scenarios, outcomes) {
        let result = ScenarioResult(scenario: scenario, outcome: outcome)
        let timeline = CondensedTorEntry.condense(outcome.torTimeline).map(\.line)
        #expect(
          result.verdict == .pass,
          "\(scenario.name): \(result.judgement.reasons)\n\(timeline.joined(separator: "\n"))")
        if scenario.ooni != nil {
          for line in ReplayComparison.lines(result) { print("lane: \(scenario.name): \(line)") }
        }
        #expect(outcome.capture.packets > 0, "\(scenario.name): nothing captured")
        #expect(!outcome.torTimeline.isEmpty, "\(scenario.name): no tor timeline")
      }
      guard withCanary, let canaryOutcome = ran.first else { return }
      let caught = ScenarioResult(scenario: canary, outcome: canaryOutcome)
      print("lane: canary \(caught.verdict.rawValue) in \(canaryOutcome.wallSeconds) s")
      #expect(
        caught.judgement.expectations.allSatisfy { $0.status == .met },
        "the naive-port app's leak on the real lane was not caught: \(caught.judgement.reasons)")
      let leaked = Set(canaryOutcome.audit.leaks.flatMap(\.names))
      #expect(!leaked.isEmpty, "the canary's report names no leaked name")
      guard runner.slots.count > 1, only.isEmpty else { return }
      // Isolation: the scenarios that ran while the canary leaked saw none of its leak.
      let span = spans.withLock { $0 }
      let beside = zip(scenarios, outcomes).filter { span[$0.0.name]!.overlaps(span[canary.name]!) }
      #expect(!beside.isEmpty, "nothing ran beside the canary")
      for (scenario, outcome) in beside {
        #expect(
          outcome.audit.leaks.allSatisfy { Set($0.names).isDisjoint(with: leaked) },
          "\(scenario.name) was charged with the canary's leak: \(outcome.audit.leaks)")
      }
      // Isolation of the censors: the healthy case reached 100% beside one dropping every relay.
      let healthy = try #require(scenarios.firstIndex { $0.name == "real-healthy" })
      let dropped = try #require(scenarios.firstIndex { $0.name == "real-relays-dropped" })
      #expect(span["real-healthy"]!.overlaps(span["real-relays-dropped"]!))
      #expect(outcomes[healthy].torTimeline.contains { $0.isBootstrap && $0.progress! >= 100 })
      #expect(
        !outcomes[dropped].torTimeline.contains { $0.isBootstrap && $0.progress! >= 100 })
    }
  }

  /// real-healthy with the naive-port app: Foundation's URLSession ignores the SOCKS proxy,
  /// so its DNS question and connection go out in clear once tor is up.
  static func canary() throws -> Scenario {
    var scenario = try ScenarioLoader.loadFile(scenariosDirectory + "/real-healthy.json").get()
    scenario.name = "real-naive-port-canary"
    scenario.app.profile = .naivePort
    scenario.app.actions = [
      AppAction(at: 0, step: .start), AppAction(at: 8, step: .sendMessage(text: "hello")),
    ]
    scenario.duration = 20
    scenario.expectations = [.leakCaught(classes: [.dns])]
    return scenario
  }
}

/// The node targets Scenarios names (RealTorTargetClass) are the world plan's nodes, each with
/// the endpoint the runner resolves it to.
@Suite struct RealTorTargetClassTests {
  @Test func everyNodeTargetNamesANodeOfTheWorldPlan() {
    let plan = TestnetPlan.world(addresses: WorldTestnet.nodeAddresses)
    let endpoints = RealLaneRunner.nodeEndpoints(plan)
    #expect(Set(endpoints.keys) == Set(RealTorTargetClass.allNodes))
    #expect(endpoints["testnet-auth2-dirport"]?.port == 9030)
    #expect(endpoints["testnet-bridge1-obfs4"]?.port == 4433)
    #expect(
      endpoints["testnet-exit1-orport"]?.host == plan.nodes.first { $0.name == "exit1" }?.address)
  }
}

/// The reachability probe's pure parts: errno and first answer bytes in OONI's words, and a
/// ClientHello that is a well-formed TLS record.
@Suite struct ReachabilityProbeTests {
  @Test func failuresAreNamedAsOONINamesThem() {
    #expect(ReachabilityProbe.failureName(errno: ETIMEDOUT) == "generic_timeout_error")
    #expect(ReachabilityProbe.failureName(errno: ECONNREFUSED) == "connection_refused")
    #expect(ReachabilityProbe.failureName(errno: ECONNRESET) == "connection_reset")
    #expect(ReachabilityProbe.failureName(errno: EHOSTUNREACH) == "host_unreachable")
    #expect(ReachabilityProbe.failureName(errno: ENETUNREACH) == "network_unreachable")
    #expect(ReachabilityProbe.classifyAnswer([], .dirauthORPorts) == "eof_error")
    #expect(ReachabilityProbe.classifyAnswer([0x16, 3, 3], .dirauthORPorts) == nil)
    #expect(
      ReachabilityProbe.classifyAnswer([0x15, 3, 3], .relayORPorts) == "ssl_failed_handshake")
    #expect(ReachabilityProbe.classifyAnswer(Array("HTTP/1.0 200".utf8), .dirauthDirPorts) == nil)
    #expect(ReachabilityProbe.classifyAnswer([], .bridgeObfs4) == "eof_error")
  }

  @Test func theClientHelloIsOneWellFormedHandshakeRecord() {
    let hello = ReachabilityProbe.clientHello()
    #expect(hello[0] == 0x16 && hello[1] == 3)
    #expect(Int(hello[3]) << 8 | Int(hello[4]) == hello.count - 5)
    #expect(hello[5] == 0x01)
    #expect(Int(hello[6]) << 16 | Int(hello[7]) << 8 | Int(hello[8]) == hello.count - 9)
    #expect(hello.count > 100, "over the censor's 100-byte DPI threshold")
  }
}
