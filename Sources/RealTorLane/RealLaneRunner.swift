import Audit
import Capture
import FailClosedSupport
import Foundation
import Sandbox
import Testnet

/// Runs real-lane cases in one sandbox: the private network starts once in the world, then each
/// case gets its censor rules, a fresh capture on the device link (allowlist: the consensus'
/// relays and the bridge) and a fresh Debian tor client in the device, watched and audited.
public final class RealLaneRunner: @unchecked Sendable {
  public struct CaseResult: Sendable, Codable {
    public var name: String
    public var proves: String
    public var passed: Bool
    public var failures: [String]
    public var timeline: [DeviceTorClient.TimedLine]
    public var report: AuditReport
    /// Seconds from the client's start to 100%, when it got there.
    public var bootstrapSeconds: Double?
    public var fetchSucceeded: Bool?
    public var pcapPath: String?
    /// The client's last notice-log lines, kept when the case failed.
    public var logTail: String?
  }

  public let sandbox: SandboxRun
  public let testnet: WorldTestnet
  let directory: String

  public init(sandbox: SandboxRun, directory: String) {
    self.sandbox = sandbox
    self.directory = directory
    testnet = WorldTestnet(sandbox: sandbox, directory: directory + "/net")
  }

  /// Starts the world's services and the private network; returns seconds to readiness.
  public func start() async throws -> Double {
    let sandbox = self.sandbox
    try await BlockingIO.run("lane.world") { try sandbox.startWorld() }
    try await testnet.start()
    return testnet.readySeconds
  }

  public func run(_ laneCase: RealLaneCase, reportDirectory: String? = nil) async throws
    -> CaseResult
  {
    let sandbox = self.sandbox
    try await BlockingIO.run("lane.censor") { try sandbox.applyCensorRules(laneCase.censor) }
    let allowed = Set(try testnet.allowlist().map(Endpoint.init))
    var pcapPath: String?
    if let reportDirectory {
      try FileManager.default.createDirectory(
        atPath: reportDirectory, withIntermediateDirectories: true)
      pcapPath = reportDirectory + "/\(laneCase.name).pcap"
    }
    let path = pcapPath
    let capture = try await BlockingIO.run("lane.capture") {
      try sandbox.openDeviceCapture(allowed: allowed, pcapPath: path)
    }
    let clock = SystemClock()
    var bridges: [BridgeLine] = []
    if laneCase.useBridge, let bridge = try testnet.network.bridgeLine() { bridges = [bridge] }
    let client = try DeviceTorClient(
      sandbox: sandbox, testnet: testnet, directory: directory + "/\(laneCase.name)-client",
      bridges: bridges, clock: clock)
    var timeline: [DeviceTorClient.TimedLine] = []
    var fetched: Bool?
    do {
      timeline = try await client.observe(seconds: laneCase.observeSeconds)
      if timeline.contains(where: { $0.progress >= 100 && $0.reason == nil }) {
        fetched = try await fetchThroughExit()
      }
    } catch {
      client.stop()
      _ = capture.stop()
      throw error
    }
    client.stop()
    timeline = client.poll()
    // Let late packets of the stopped client reach the capture.
    try await clock.sleep(seconds: 0.5)
    let report = capture.stop()
    let failures = RealLaneRunner.judge(
      laneCase, timeline: timeline, report: report, fetched: fetched)
    let ready = timeline.first { $0.progress >= 100 && $0.reason == nil }?.time
    return CaseResult(
      name: laneCase.name, proves: laneCase.proves, passed: failures.isEmpty, failures: failures,
      timeline: timeline, report: report, bootstrapSeconds: ready, fetchSucceeded: fetched,
      pcapPath: pcapPath,
      logTail: failures.isEmpty
        ? nil : client.client.log.split(separator: "\n").suffix(25).joined(separator: "\n"))
  }

  /// 100% does not guarantee a usable exit at once: a bounded retry of one fetch from the
  /// device, through the client's SOCKS port, of the world's web host.
  func fetchThroughExit() async throws -> Bool {
    let device = sandbox.device.name
    for _ in 0..<10 {
      let output = try await BlockingIO.run("lane.fetch") {
        try CommandRunner.capture([
          "ip", "netns", "exec", device, "curl", "-s", "-m", "5", "-o", "/dev/null", "-w",
          "%{http_code}", "--socks5-hostname", "127.0.0.1:39050",
          "http://\(AddressPlan.webHostV4)/",
        ])
      }
      if output.stdout == "200" { return true }
      try await Task.sleep(nanoseconds: 500_000_000)
    }
    return false
  }

  static func judge(
    _ laneCase: RealLaneCase, timeline: [DeviceTorClient.TimedLine], report: AuditReport,
    fetched: Bool?
  ) -> [String] {
    var failures: [String] = []
    if report.verdict != .pass {
      failures.append(
        "capture verdict \(report.verdict.rawValue): "
          + report.leaks.map { "\($0.leakClass.rawValue) to \($0.destination)" }.joined(
            separator: ", ")
          + report.reasons.map(\.description).joined(separator: "; "))
    }
    let progress = timeline.filter { $0.reason == nil }.map(\.progress).max() ?? 0
    for expectation in laneCase.expectations {
      switch expectation {
      case .bootstraps:
        if progress < 100 { failures.append("bootstrap stopped at \(progress)%, expected 100%") }
        if fetched != true { failures.append("no fetch through the exit succeeded") }
      case .stuck(let atMost, let tag):
        if progress > atMost {
          failures.append("bootstrap reached \(progress)%, expected at most \(atMost)%")
        }
        if let last = timeline.last(where: { $0.reason == nil }), last.tag != tag,
          progress == atMost
        {
          failures.append("bootstrap tag \(last.tag), expected \(tag)")
        }
      case .problem(let reason):
        if !timeline.contains(where: { $0.reason == reason }) {
          failures.append("tor never warned \(reason)")
        }
      case .throughBridge:
        if !timeline.contains(where: { $0.tag.hasSuffix("_pt") }) {
          failures.append("bootstrap did not go through the pluggable transport")
        }
      case .onlyPorts(let ports):
        let others = report.flows.filter {
          $0.disposition == "allowed" && !ports.contains($0.destinationPort)
            && !ports.contains($0.sourcePort)
        }
        if !others.isEmpty {
          failures.append(
            "flows to other ports: "
              + others.map { "\($0.destination):\($0.destinationPort)" }.joined(separator: ", "))
        }
      }
    }
    return failures
  }
}
