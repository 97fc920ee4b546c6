import Audit
import FailClosedSupport
import Foundation
import Sandbox
import Scenarios
import TorControl

/// The mock lane: a fresh sandbox per scenario, the mock Tor (`failclosed mock-tor`) in the
/// device tunnelling to the world's guard, the modelled app (`failclosed app`), both on the
/// run's one clock (its epoch on their command lines); the capture allows the guard alone.
public struct MockLane: Lane {
  /// The `failclosed` binary the device runs (`mock-tor`, `app`).
  public var executable: String
  /// Virtual seconds per real second: 75 s of bootstrap deadline in ~3 s.
  public var timeScale: Double
  /// Where each scenario's files go (capture.pcap, app.jsonl, mock.jsonl); a temporary
  /// directory, removed afterwards, when nil.
  public var workDirectory: String?

  /// Where runs without a work directory of their own make theirs (each removed after its
  /// run); made at the first run and kept, shared by every harness process.
  public static var runsDirectory: String { NSTemporaryDirectory() + "failclosed-runs" }

  public init(executable: String, timeScale: Double = 25, workDirectory: String? = nil) {
    self.executable = executable
    self.timeScale = timeScale
    self.workDirectory = workDirectory
  }

  public func begin(_ scenario: Scenario) throws -> any LaneRun {
    try MockLaneRun(scenario, lane: self)
  }

  /// The app's events with what the harness itself did on the same axis: each crash of the
  /// mock Tor (`tor-crashed`) and each change of the censor's rules (`censor-changed`), so a
  /// fault shows in the events, the timeline and every report.
  static func withHarnessEvents(_ events: [ScenarioEvent], _ scenario: Scenario, plan: TorPlan)
    -> [ScenarioEvent]
  {
    var harness: [ScenarioEvent] = []
    for action in scenario.app.actions where action.step == .torCrash {
      harness.append(
        ScenarioEvent(
          time: action.at, name: ScenarioEventKind.torCrashed.name, fields: ["by": "action"]))
    }
    if let crashAt = plan.crashAt {
      harness.append(
        ScenarioEvent(
          time: crashAt, name: ScenarioEventKind.torCrashed.name, fields: ["by": "crashAt"]))
    }
    if case .crash(let after)? = plan.plan {
      harness.append(
        ScenarioEvent(time: after, name: ScenarioEventKind.torCrashed.name, fields: ["by": "plan"]))
    }
    for time in SandboxMapping.changeTimes(scenario.network) {
      let rules = scenario.network.censor.filter { $0.isActive(at: time) }
      harness.append(
        ScenarioEvent(
          time: time, name: ScenarioEventKind.censorChanged.name,
          fields: [
            "rules": String(rules.count),
            "active": rules.isEmpty
              ? "none" : rules.map { "\($0.action.rawValue) \($0.target)" }.joined(separator: ", "),
          ]))
    }
    // Stable: at equal times the app's events come first.
    return (events + harness).enumerated().sorted {
      ($0.element.time, $0.offset) < ($1.element.time, $1.offset)
    }.map(\.element)
  }

  /// Waits until `text` appears in the file at `path`, for at most `seconds`.
  static func waitForLine(_ text: String, in path: String, seconds: Double) {
    let realTime = SystemClock()
    while realTime.now < seconds {
      if let content = try? String(contentsOfFile: path, encoding: .utf8), content.contains(text) {
        return
      }
      realTime.sleepBlocking(seconds: 0.02)
    }
  }
}

/// One scenario on the mock lane.
class MockLaneRun: LaneRun {
  let scenario: Scenario
  let plan: TorPlan
  let lane: MockLane
  let sandbox: SandboxRun
  let workDirectory: String
  var trustAnchors: String { workDirectory + "/world-ca.pem" }
  var capturePath: String { workDirectory + "/capture.pcap" }
  var keptPcapPath: String? { lane.workDirectory == nil ? nil : capturePath }
  var timeScale: Double { lane.timeScale }
  var clockSharing: RunClockSharing { .handOverSkipping }
  var deadline: Double { scenario.duration / timeScale + 20 }
  private var mock: DeviceCommand?
  /// The run's skipping clock page, when the pipeline skips idle time.

  init(_ scenario: Scenario, lane: MockLane) throws {
    guard let plan = scenario.tor.mock else {
      throw ScenarioError(
        file: scenario.path, path: "lane",
        message: "a real-tor scenario: it runs in the private network (RealLaneRunner)")
    }
    self.scenario = scenario
    self.plan = plan
    self.lane = lane
    // Unique per run: the same scenario may run several times side by side.
    let unique = "\(scenario.name)-\(UUID().uuidString.prefix(8))"
    workDirectory = (lane.workDirectory ?? MockLane.runsDirectory) + "/" + unique
    try FileManager.default.createDirectory(
      atPath: workDirectory + "/state", withIntermediateDirectories: true)
    do {
      sandbox = try SandboxRun.createBlocking()
    } catch {
      if lane.workDirectory == nil { try? FileManager.default.removeItem(atPath: workDirectory) }
      throw error
    }
    do {
      let world = try sandbox.startWorld()
      try world.authority.writeRootCertificate(to: workDirectory + "/world-ca.pem")
    } catch {
      tearDown()
      throw error
    }
  }

  func censorRules(at t: Double) -> [Sandbox.CensorRule] {
    SandboxMapping.censorRules(scenario.network, at: t)
  }

  func captureAllows() throws -> AllowedEndpoints { AddressPlan.guardEndpoints }

  func preferences() throws -> String { ScenarioCommandLines.preferences(scenario) }

  /// The mock says ready once its options are read, and started once it listens: before the
  /// run's time 0, when the app's first action (start) connects to it. Without a hand-over
  /// (bitchat's code, on its own clock) it starts on its own clock.
  func startTorSide(handOver: EpochHandOver?, clockPage: String?) throws {
    let log = workDirectory + "/mock.log"
    let command = ScenarioCommandLines.mockTor(
      plan, executable: lane.executable, timeScale: timeScale,
      guards: AddressPlan.guards.map(\.description), eventLog: workDirectory + "/mock.jsonl")
    guard let handOver else {
      mock = try DeviceCommand(command, in: sandbox, output: log)
      if plan.personality == .ctor {
        // The control-port backend connects at once: wait (bounded) for the mock to listen.
        MockLane.waitForLine("control port on", in: log, seconds: 10)
      }
      return
    }
    let input = try handOver.add("the mock Tor", output: log)
    mock = try DeviceCommand(
      command + ["--epoch", EpochReceiver.optionValue]
        + (clockPage.map { ["--clock-page", $0] } ?? []),
      in: sandbox, output: log, input: input)
  }

  func appCommand(actionsFile: String, stateDirectory: String) -> [String] {
    ScenarioCommandLines.app(
      scenario, executable: lane.executable, timeScale: timeScale, actionsFile: actionsFile,
      stateDirectory: stateDirectory, trustAnchors: trustAnchors)
  }

  func torSideChanges() -> [(time: Double, apply: () throws -> Void)] {
    guard let mock else { return [] }
    return ScenarioCommandLines.crashTimes(scenario).map { time in
      (time, { kill(-mock.pid, SIGKILL) })
    }
  }

  var harnessEvents: [ScenarioEvent] { MockLane.withHarnessEvents([], scenario, plan: plan) }

  func appEnded(runError: String?, appOutput: String) -> String? {
    guard let mock else { return runError }
    var runError = runError
    // The mock ending on its own (no crash planned) is the harness failing, not the app: the
    // run cannot vouch for anything, and the mock's last words say why.
    // An exit the app asked for (Onion Browser 2.X/3.X's SIGNAL SHUTDOWN) is not early.
    if runError == nil, ScenarioCommandLines.crashTimes(scenario).isEmpty,
      let mockStatus = Spawner.poll(mock.pid),
      !((try? String(contentsOfFile: appOutput, encoding: .utf8))?
        .contains(#""command":"SIGNAL SHUTDOWN""#) ?? false)
    {
      runError =
        "the mock Tor exited early with status \(mockStatus): "
        + LanePipeline.lastLines(workDirectory + "/mock.log")
    }
    // A mock that could not listen (its SOCKS port held) never gave the app its Tor: the
    // harness failed, not the app.
    if runError == nil, let error = Self.unrecoveredListenerError(workDirectory + "/mock.jsonl") {
      runError = "the mock Tor could not listen, so the app never had its Tor: \(error)"
    }
    // Stop the mock; the pipeline keeps capturing until its end marker is read.
    kill(-mock.pid, SIGTERM)
    return runError
  }

  func stopTorSide() { mock?.killTree() }

  /// The mock's last `listener-error` (its event log), unless a `listener` event (a bind that
  /// worked) came after it.
  static func unrecoveredListenerError(_ eventLog: String) -> String? {
    guard let text = try? String(contentsOfFile: eventLog, encoding: .utf8) else { return nil }
    var error: String?
    for line in text.split(separator: "\n") {
      guard let data = line.data(using: .utf8),
        let event = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
      else { continue }
      switch event["event"] as? String {
      case "listener-error": error = (event["error"] as? String) ?? "unknown error"
      case "listener": error = nil
      default: break
      }
    }
    return error
  }

  func complete(_ outcome: inout ScenarioOutcome) {
    outcome.events = MockLane.withHarnessEvents(outcome.events, scenario, plan: plan)
  }

  func tearDown() {
    mock?.killTree()
    _ = sandbox.teardown()
    if lane.workDirectory == nil { try? FileManager.default.removeItem(atPath: workDirectory) }
  }
}
