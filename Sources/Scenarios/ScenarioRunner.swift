import Audit
import Capture
import FailClosedSupport
import Foundation
import Sandbox
import SystemUnderTest
import TorControl

/// Runs one scenario for real: fresh namespaces, the world's services, the censor's rules, the
/// capture on the device's link (proved live by the positive control), the mock Tor and the app
/// driver in the device, both on the same scaled clock; then a grace period, the audit, and the
/// app's events, gathered into a ``ScenarioOutcome`` for the judge.
public struct ScenarioRunner: Sendable {
  public struct Options: Sendable {
    /// The `failclosed` binary the device runs (`mock-tor`, `app`).
    public var executable: String
    /// Virtual seconds per real second: 75 s of bootstrap deadline in ~3 s.
    public var timeScale: Double
    /// Real seconds to keep capturing after the app and the mock have exited.
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

    public init(
      executable: String, timeScale: Double = 25, grace: Double = 1,
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
    let options = self.options
    let started = Date()
    do {
      return try await BlockingIO.run("scenario.\(scenario.name)") {
        try ScenarioRunner.runBlocking(scenario, options: options)
      }
    } catch {
      return ScenarioOutcome(
        audit: CaptureAudit(verdict: .inconclusive, inconclusiveReasons: ["\(error)"]),
        capture: CaptureStats(packets: 0, dropped: 0, positiveControlSeen: false),
        runError: "\(error)", wallSeconds: Date().timeIntervalSince(started))
    }
  }

  static func runBlocking(_ scenario: Scenario, options: Options) throws -> ScenarioOutcome {
    guard let plan = scenario.tor.mock else {
      throw ScenarioError(
        file: scenario.path, path: "lane",
        message: "a real-tor scenario: it runs in the private network (RealLaneRunner)")
    }
    // bitchat's own code reads the wall clock: its scenarios run in real time.
    let sourceTransport = try ScenarioCommandLines.bitchatSourceTransport(
      scenario, driver: options.bitchatSourceDriver, substitute: options.substituteBitchatSource)
    var options = options
    if sourceTransport != nil { options.timeScale = 1 }
    let wallStart = Date()
    // Unique per run: the same scenario may run several times side by side.
    let unique = "\(scenario.name)-\(UUID().uuidString.prefix(8))"
    let directory =
      (options.workDirectory ?? NSTemporaryDirectory() + "failclosed-runs") + "/" + unique
    try FileManager.default.createDirectory(
      atPath: directory + "/state", withIntermediateDirectories: true)
    defer {
      if options.workDirectory == nil { try? FileManager.default.removeItem(atPath: directory) }
    }

    let run = try SandboxRun.createBlocking()
    defer { run.teardown() }
    let world = try run.startWorld()
    let trustAnchors = directory + "/world-ca.pem"
    try world.authority.writeRootCertificate(to: trustAnchors)
    try run.applyCensorRules(SandboxMapping.censorRules(scenario.network, at: 0))

    let pcapPath = directory + "/capture.pcap"
    let capture = try run.openDeviceCapture(
      allowed: AddressPlan.guardEndpoints, pcapPath: pcapPath)
    var captureStopped = false
    defer { if !captureStopped { _ = capture.stop() } }

    try ScenarioCommandLines.actionsFile(scenario).write(
      toFile: directory + "/actions.jsonl", atomically: true, encoding: .utf8)
    try ScenarioCommandLines.preferences(scenario).write(
      toFile: directory + "/state/preferences.json", atomically: true, encoding: .utf8)
    try ScenarioCommandLines.directoryCache().write(
      toFile: directory + "/state/" + GeoRelayDirectory.cacheFileName, atomically: true,
      encoding: .utf8)
    let mock = try DeviceCommand(
      ScenarioCommandLines.mockTor(
        plan, executable: options.executable, timeScale: options.timeScale,
        guards: AddressPlan.guards.map(\.description), eventLog: directory + "/mock.jsonl"),
      in: run, output: directory + "/mock.log")
    if plan.personality == .ctor {
      // The control-port backend connects at once: wait (bounded) for the mock to listen.
      waitForLine("control port on", in: directory + "/mock.log", seconds: 10)
    }
    let appOutput = directory + "/app.jsonl"
    let runStart = Date().timeIntervalSince1970
    let appCommand =
      sourceTransport.map {
        ScenarioCommandLines.bitchatSourceApp(
          driver: options.bitchatSourceDriver!, transport: $0,
          actionsFile: directory + "/actions.jsonl", stateDirectory: directory + "/state",
          trustAnchors: trustAnchors)
      }
      ?? ScenarioCommandLines.app(
        scenario, executable: options.executable, timeScale: options.timeScale,
        actionsFile: directory + "/actions.jsonl", stateDirectory: directory + "/state",
        trustAnchors: trustAnchors)
    let app = try DeviceCommand(appCommand, in: run, output: appOutput)

    // Timed changes on the Tor side and in the censor, in virtual time order.
    var changes: [(time: Double, apply: () throws -> Void)] = []
    for time in ScenarioCommandLines.crashTimes(scenario) {
      changes.append((time, { kill(-mock.pid, SIGKILL) }))
    }
    for time in SandboxMapping.changeTimes(scenario.network) where time > 0 {
      changes.append(
        (time, { try run.applyCensorRules(SandboxMapping.censorRules(scenario.network, at: time)) })
      )
    }
    changes.sort { $0.time < $1.time }
    var harnessEvents = ScenarioRunner.withHarnessEvents([], scenario, plan: plan)
    let stream = options.onEvent.map { EventStream(path: appOutput, onEvent: $0) }
    // The app ends itself after the scenario's duration; allow generous slack in real time.
    let deadline = runStart + scenario.duration / options.timeScale + 20
    var appStatus: Int32?
    while appStatus == nil && Date().timeIntervalSince1970 < deadline {
      let virtualNow = (Date().timeIntervalSince1970 - runStart) * options.timeScale
      while let next = changes.first, next.time <= virtualNow {
        changes.removeFirst()
        try next.apply()
      }
      if let stream {
        stream.poll()
        while let next = harnessEvents.first, next.time <= virtualNow {
          stream.onEvent(harnessEvents.removeFirst())
        }
      }
      appStatus = Spawner.poll(app.pid)
      if appStatus == nil { usleep(10_000) }
    }
    var runError: String?
    if appStatus == nil {
      runError = "the app did not finish within \(Int(deadline - runStart)) s (killed)"
    } else if appStatus != 0 {
      runError = "the app exited with status \(appStatus!): " + lastLines(appOutput)
    }
    // The mock ending on its own (no crash planned) is the harness failing, not the app: the
    // run cannot vouch for anything, and the mock's last words say why.
    // An exit the app asked for (Onion Browser 2.X/3.X's SIGNAL SHUTDOWN) is not early.
    if runError == nil, ScenarioCommandLines.crashTimes(scenario).isEmpty,
      let mockStatus = Spawner.poll(mock.pid),
      !((try? String(contentsOfFile: appOutput, encoding: .utf8))?
        .contains(#""command":"SIGNAL SHUTDOWN""#) ?? false)
    {
      runError =
        "the mock Tor exited early with status \(mockStatus): " + lastLines(directory + "/mock.log")
    }
    // Stop the mock, then keep capturing for the grace period: a late leak is still caught.
    kill(-mock.pid, SIGTERM)
    usleep(UInt32(max(0, options.grace) * 1_000_000))
    app.killTree()
    mock.killTree()
    let report = capture.stop()
    captureStopped = true

    stream?.poll()
    let (events, parseErrors) = ScenarioRunner.readEvents(appOutput)
    if runError == nil, !parseErrors.isEmpty {
      runError =
        "the app printed lines that are not events: "
        + parseErrors.prefix(3).joined(separator: " | ")
    }
    return ScenarioOutcome(
      events: ScenarioRunner.withHarnessEvents(
        events.map(ScenarioEvent.init), scenario, plan: plan),
      bootstrap: BootstrapSample.timeline(from: events),
      torTimeline: TorTimelineEntry.timeline(from: events),
      audit: CaptureAudit(report, runStart: runStart, timeScale: options.timeScale),
      capture: CaptureStats(
        report, pcapPath: options.workDirectory == nil ? nil : pcapPath),
      runError: runError, wallSeconds: Date().timeIntervalSince(wallStart))
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
          time: action.at, name: ScenarioEventName.torCrashed, fields: ["by": "action"]))
    }
    if let crashAt = plan.crashAt {
      harness.append(
        ScenarioEvent(time: crashAt, name: ScenarioEventName.torCrashed, fields: ["by": "crashAt"]))
    }
    if case .crash(let after)? = plan.plan {
      harness.append(
        ScenarioEvent(time: after, name: ScenarioEventName.torCrashed, fields: ["by": "plan"]))
    }
    for time in SandboxMapping.changeTimes(scenario.network) {
      let rules = scenario.network.censor.filter { $0.isActive(at: time) }
      harness.append(
        ScenarioEvent(
          time: time, name: ScenarioEventName.censorChanged,
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

  /// The app's JSON lines; other lines (stderr shares the file) are returned apart.
  public static func readEvents(_ path: String) -> ([SystemUnderTest.AppEvent], [String]) {
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    var events: [SystemUnderTest.AppEvent] = []
    var other: [String] = []
    for line in text.split(separator: "\n") where !line.isEmpty {
      if line.hasPrefix("{"), let event = try? SystemUnderTest.AppEvent(jsonLine: String(line)) {
        events.append(event)
      } else {
        other.append(String(line.prefix(200)))
      }
    }
    return (events, other)
  }

  /// Waits until `text` appears in the file at `path`, for at most `seconds`.
  static func waitForLine(_ text: String, in path: String, seconds: Double) {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
      if let content = try? String(contentsOfFile: path, encoding: .utf8), content.contains(text) {
        return
      }
      usleep(20_000)
    }
  }

  public static func lastLines(_ path: String) -> String {
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    return text.split(separator: "\n").suffix(3).joined(separator: " | ")
  }
}
