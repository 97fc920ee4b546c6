import Audit
import FailClosedSupport
import Foundation
import Sandbox
import Testing
import Testnet

@testable import RealTorLane

/// The app's own Debian tor (`failclosed app --backend tor`) in the device, against the private
/// network in the world, with every relay port dropped and only the obfs4 bridge reachable, and
/// the bridge line in the app's settings. hardened bootstraps through the bridge and the bridge
/// is the only flow on the wire; bitchat, which has no bridge support, stays at 5% until its
/// 75 s deadline reports a stall, and nothing leaks either way. One network for both.
@Suite(.serialized, .enabled(if: Privilege.rootSkipReason == nil, "needs root"))
struct AppBridgeLaneTests {
  /// bitchat's watch: past its 75 s bootstrap deadline (TorManager's poll, on the app's clock at
  /// time scale 1), so the stall it reports is inside the window and the capture covers the
  /// whole deadline, with a few seconds for the stall to be posted.
  static let bitchatWatchSeconds = 80.0
  /// hardened's bound: the recipe's bridged client takes ~3.3 s; the app is stopped (SIGTERM,
  /// its own exit path) a few seconds after it reports ready.
  static let hardenedBoundSeconds = 60.0

  static let failclosedBinary: String = {
    URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent("failclosed").path
  }()

  struct AppRun {
    var status: Int32?
    var treeFinished: Bool
    var events: [[String: Any]]
    var timeline: [DeviceTorClient.TimedLine]
    var report: AuditReport
    var startedAt: Double?
    var readyAt: Double?
    var output: String

    func events(_ type: String, _ key: String, _ value: String) -> [[String: Any]] {
      events.filter { $0["type"] as? String == type && "\($0[key] ?? "")" == value }
    }

    func state(_ field: String) -> [String] {
      events("state", "field", field).map { "\($0["value"] ?? "")" }
    }

    var notifications: [String] {
      events.filter { $0["type"] as? String == "notification" }.map { "\($0["name"] ?? "")" }
    }
  }

  @Test(.timeLimit(.minutes(4)))
  func hardenedBootstrapsThroughTheBridgeBitchatStallsNothingLeaks() async throws {
    let base = NSTemporaryDirectory() + "fc-appbridge-\(getpid())-\(UInt32.random(in: 0...9999))"
    defer { try? FileManager.default.removeItem(atPath: base) }
    try await withSandbox { sandbox in
      let runner = RealLaneRunner(sandbox: sandbox, directory: base)
      defer { runner.testnet.stop() }
      let networkReady = try await runner.start()
      print("private network ready (consensus lists every relay) after \(networkReady) s")
      let censor = RealLaneCase.block(.drop, ports: RealLaneCase.relayPorts)
      try await BlockingIO.run("test.censor") { try sandbox.applyCensorRules(censor) }
      let bridge = try #require(try runner.testnet.network.bridgeLine())
      let baseTorrc = base + "/client-base.torrc"
      try runner.testnet.network.builder.clientBase.write(
        toFile: baseTorrc, atomically: true, encoding: .utf8)
      let allowed = Set(try runner.testnet.allowlist().map(Endpoint.init))

      // FC_APPBRIDGE_ROUNDS=N repeats the hardened run N times on the same network (timings).
      let rounds = Int(ProcessInfo.processInfo.environment["FC_APPBRIDGE_ROUNDS"] ?? "") ?? 1
      for round in 0..<max(1, rounds) {
        let hardened = try await Self.runApp(
          profile: "hardened", bridge: bridge, baseTorrc: baseTorrc, sandbox: sandbox,
          allowed: allowed, directory: base + "/hardened-\(round)",
          watchSeconds: Self.hardenedBoundSeconds,
          stopWhenReady: true)
        let bridgeCase = RealLaneCase(
          name: "app-hardened-bridge", proves: "", censor: censor, useBridge: true,
          observeSeconds: 0, expectations: [.throughBridge, .onlyPorts([bridge.port])])
        let hardenedFailures = RealLaneRunner.judge(
          bridgeCase, timeline: hardened.timeline, report: hardened.report, fetched: nil)
        #expect(hardenedFailures.isEmpty, "hardened: \(hardenedFailures)\n\(hardened.output)")
        #expect(hardened.state("bridges") == ["used"])
        #expect(hardened.notifications.contains("TorDidBecomeReady"), "\(hardened.output)")
        #expect(hardened.state("bootstrapProgress").contains("100"))
        #expect(hardened.timeline.contains { $0.progress == 100 && $0.reason == nil })
        #expect(hardened.report.statistics.packets > 0)
        #expect(hardened.treeFinished, "tor or the app outlived the app")
        if let started = hardened.startedAt, let ready = hardened.readyAt {
          func seconds(_ event: [String: Any]?) -> String {
            guard let time = (event?["t"] as? NSNumber)?.doubleValue else { return "-" }
            return String(format: "%.2f", time - started)
          }
          // The controller's report (0.15 s polls) and TorManager's (1 s polls).
          let controller = hardened.events("tor", "phase", "bootstrap").first {
            "\($0["progress"] ?? "")" == "100"
          }
          let manager = hardened.events("state", "field", "bootstrapProgress").first {
            "\($0["value"] ?? "")" == "100"
          }
          print(
            "app-driven tor through the bridge, round \(round): 100% reported by the controller "
              + "\(seconds(controller)) s, seen by TorManager \(seconds(manager)) s, "
              + "TorDidBecomeReady \(String(format: "%.2f", ready - started)) s after tor started; "
              + hardened.events("tor", "phase", "bootstrap").filter { $0["progress"] != nil }.map {
                "\($0["progress"] ?? "")% \($0["tag"] ?? "") \(seconds($0))"
              }.joined(separator: ", "))
        }
      }

      let bitchat = try await Self.runApp(
        profile: "bitchat", bridge: bridge, baseTorrc: baseTorrc, sandbox: sandbox,
        allowed: allowed, directory: base + "/bitchat", watchSeconds: Self.bitchatWatchSeconds,
        stopWhenReady: false)
      let stallCase = RealLaneCase(
        name: "app-bitchat-no-bridges", proves: "", censor: censor, observeSeconds: 0,
        expectations: [.stuck(atMost: 5, tag: "conn")])
      let bitchatFailures = RealLaneRunner.judge(
        stallCase, timeline: bitchat.timeline, report: bitchat.report, fetched: nil)
      #expect(bitchatFailures.isEmpty, "bitchat: \(bitchatFailures)\n\(bitchat.output)")
      #expect(bitchat.status == 0, "\(bitchat.output)")
      #expect(bitchat.state("bridges") == ["ignored"])
      #expect(!bitchat.notifications.contains("TorDidBecomeReady"))
      #expect(bitchat.notifications.contains("TorBootstrapDidStall"))
      #expect(bitchat.state("bootstrapProgress").allSatisfy { (Int($0) ?? 0) <= 5 })
      #expect(!bitchat.timeline.contains { $0.tag.hasSuffix("_pt") })
      #expect(bitchat.report.verdict == .pass)
      #expect(bitchat.report.statistics.packets > 0)
      #expect(bitchat.treeFinished, "tor or the app outlived the app")
    }
  }

  /// Whether `pid` has exited, leaving it unreaped for ``DeviceCommand/waitForTree(timeout:)``.
  static func exited(_ pid: pid_t) -> Bool {
    var info = siginfo_t()
    guard waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 else { return true }
    return info._sifields._sigchld.si_pid != 0
  }

  /// Runs the app in the device with the bridge in its settings, captures the device's link,
  /// and gathers its events, tor's bootstrap lines and the audit.
  static func runApp(
    profile: String, bridge: BridgeLine, baseTorrc: String, sandbox: SandboxRun,
    allowed: Set<Endpoint>, directory: String, watchSeconds: Double, stopWhenReady: Bool
  ) async throws -> AppRun {
    let state = directory + "/state"
    try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
    let preferences = try JSONSerialization.data(withJSONObject: ["tor.bridges": [bridge.text]])
    try preferences.write(to: URL(fileURLWithPath: state + "/preferences.json"))
    let actions = [
      #"{"at": 0, "action": "start"}"#, #"{"action": "send-message", "text": "hello"}"#,
      #"{"action": "wait", "seconds": \#(watchSeconds)}"#,
    ].joined(separator: "\n")
    try actions.write(toFile: directory + "/actions.jsonl", atomically: true, encoding: .utf8)
    let capture = try await BlockingIO.run("test.capture") {
      try sandbox.openDeviceCapture(allowed: allowed, pcapPath: directory + "/capture.pcap")
    }
    let output = directory + "/app.jsonl"
    let command = [
      failclosedBinary, "app", "--backend", "tor", "--torrc-base", baseTorrc, "--profile",
      profile, "--state-dir", state, "--actions", directory + "/actions.jsonl", "--time-scale",
      "1",
    ]
    let app: DeviceCommand
    do {
      app = try DeviceCommand(command, in: sandbox, output: output)
    } catch {
      _ = capture.stop()
      throw error
    }
    let (status, finished) = try await BlockingIO.run("test.app") {
      () -> (Int32?, Bool) in
      let deadline = Date().addingTimeInterval(watchSeconds + 30)
      var readySeen: Date?
      while Date() < deadline {
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        if stopWhenReady, readySeen == nil, text.contains("\"TorDidBecomeReady\"") {
          readySeen = Date()
        }
        // Ready, and a few seconds for the message to go out: stop the app as SIGTERM would.
        if let seen = readySeen, Date().timeIntervalSince(seen) > 3 {
          kill(app.pid, SIGTERM)
          break
        }
        if exited(app.pid) { break }
        usleep(100_000)
      }
      let result = app.waitForTree(timeout: 10)
      if !result.finished { app.killTree() }
      return (result.status, result.finished)
    }
    // Late packets of the stopped tor still reach the capture.
    try await Task.sleep(nanoseconds: 500_000_000)
    let report = capture.stop()
    let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    let events = text.split(separator: "\n").compactMap {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
    }
    let notice =
      (try? String(contentsOfFile: state + "/tor/notice.log", encoding: .utf8)) ?? ""
    let problems =
      (try? String(contentsOfFile: state + "/tor/bootstrap-problems.log", encoding: .utf8)) ?? ""
    let timeline =
      BootstrapLogLine.all(in: notice).map {
        DeviceTorClient.TimedLine(
          time: 0, progress: $0.progress, tag: $0.tag, summary: $0.summary, reason: nil,
          count: nil)
      }
      + BootstrapProblemLine.all(in: problems).map {
        DeviceTorClient.TimedLine(
          time: 0, progress: $0.progress, tag: $0.tag, summary: $0.warning, reason: $0.reason,
          count: $0.count)
      }
    func time(_ predicate: ([String: Any]) -> Bool) -> Double? {
      events.first(where: predicate).flatMap { ($0["t"] as? NSNumber)?.doubleValue }
    }
    let startedAt = time {
      $0["type"] as? String == "tor" && "\($0["detail"] ?? "")".hasPrefix("started pid")
    }
    let readyAt = time { "\($0["name"] ?? "")" == "TorDidBecomeReady" }
    let summary =
      text.split(separator: "\n").filter {
        !$0.hasPrefix("{") || $0.contains("\"tor\"") || $0.contains("error")
      }
      .suffix(30).joined(separator: "\n") + "\ntor log:\n"
      + notice.split(separator: "\n").suffix(15).joined(separator: "\n")
    return AppRun(
      status: status, treeFinished: finished, events: events, timeline: timeline, report: report,
      startedAt: startedAt, readyAt: readyAt, output: summary)
  }
}
