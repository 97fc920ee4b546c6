import Audit
import FailClosedSupport
import Foundation
import Sandbox
import TestSupport
import Testing

@testable import Lanes
@testable import Scenarios

/// The pipeline's grace ends with the capture's end marker, not a fixed second: a datagram the
/// app sends as its very last act, then exits, is still in the capture (the canary, on both
/// address families: an IPv6 one may wait on neighbour discovery), and an app that sends
/// nothing passes (the positive control: the marker itself is no leak). Grace 0: the marker
/// alone must do it.
@Suite(.serialized, .needsRoot)
struct LateLeakTests {
  @Test(arguments: [AddressPlan.webHostV4, AddressPlan.webHostV6])
  func aDatagramSentRightBeforeTheAppExitsIsCaught(_ host: String) async throws {
    let outcome = try await run(sendingTo: host)
    #expect(outcome.runError == nil, "\(outcome.runError ?? "")")
    #expect(outcome.audit.verdict == .leak, "\(outcome.audit.inconclusiveReasons)")
    #expect(
      outcome.audit.leaks.contains { $0.destination.contains(host) }, "\(outcome.audit.leaks)")
  }

  @Test func anAppThatSendsNothingPasses() async throws {
    let outcome = try await run(sendingTo: nil)
    #expect(outcome.runError == nil, "\(outcome.runError ?? "")")
    #expect(outcome.audit.verdict == .pass, "\(outcome.audit.inconclusiveReasons)")
    #expect(outcome.capture.positiveControlSeen)
  }

  func run(sendingTo host: String?) async throws -> ScenarioOutcome {
    let scenario = try libraryScenario("healthy-baseline")
    return await LanePipeline.run(
      scenario, on: LastActLane(host: host), options: LanePipeline.Options(grace: 0))
  }
}

/// A lane whose app is one Python line: send a datagram to `host` (nothing when nil) and exit.
struct LastActLane: Lanes.Lane {
  var host: String?

  func begin(_ scenario: Scenario) throws -> any LaneRun {
    try LastActRun(scenario, host: host)
  }
}

final class LastActRun: LaneRun {
  let scenario: Scenario
  let sandbox: SandboxRun
  let workDirectory: String
  let host: String?
  var capturePath: String { workDirectory + "/capture.pcap" }
  var keptPcapPath: String? { nil }
  var trustAnchors: String { workDirectory + "/ca.pem" }
  var timeScale: Double { 1 }
  var clockSharing: RunClockSharing { .own }
  var deadline: Double { 20 }

  init(_ scenario: Scenario, host: String?) throws {
    self.scenario = scenario
    self.host = host
    workDirectory = NSTemporaryDirectory() + "failclosed-lastact-\(UUID().uuidString.prefix(8))"
    try FileManager.default.createDirectory(
      atPath: workDirectory + "/state", withIntermediateDirectories: true)
    sandbox = try SandboxRun.createBlocking()
  }

  func censorRules(at t: Double) -> [Sandbox.CensorRule] { [] }
  func captureAllows() throws -> AllowedEndpoints { AddressPlan.guardEndpoints }
  func preferences() throws -> String { "{}" }
  func startTorSide(handOver: EpochHandOver?, clockPage: String?) throws {}

  func appCommand(actionsFile: String, stateDirectory: String) -> [String] {
    guard let host else { return ["true"] }
    let family = host.contains(":") ? "AF_INET6" : "AF_INET"
    return [
      "python3", "-c",
      "import os, socket; s = socket.socket(socket.\(family), socket.SOCK_DGRAM); "
        + "s.sendto(b'last act', ('\(host)', 4433)); os._exit(0)",
    ]
  }

  func tearDown() {
    _ = sandbox.teardown()
    try? FileManager.default.removeItem(atPath: workDirectory)
  }
}
