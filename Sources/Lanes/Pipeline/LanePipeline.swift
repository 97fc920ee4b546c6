import Audit
import FailClosedSupport
import Foundation
import Sandbox
import Scenarios
import SystemUnderTest

/// The one pipeline every lane runs: the lane's sandbox and censor rules, the capture on the
/// device's link (proved live by the positive control), the Tor side, the app with the
/// scenario's actions, the timed changes (censor, Tor side), a grace period, the audit, and
/// the app's events, gathered into a ``ScenarioOutcome`` for the judge. The Tor side, the app
/// and the pipeline's own timeline (censor changes, crashes, the capture's axis) run on one
/// clock: an epoch the pipeline makes and hands to each process on its command line, and a
/// scale.
public enum LanePipeline {
  public struct Options: Sendable {
    /// Real seconds to keep capturing after the app has ended: a late leak is still caught.
    public var grace: Double
    /// Called with each event as it happens (the app's, and the harness's crashes and censor
    /// changes), on the pipeline's thread: `replay` streams them, so an interrupted run still
    /// shows what happened up to then.
    public var onEvent: (@Sendable (ScenarioEvent) -> Void)?
    /// Real seconds from making the run's clock to its time 0: the Tor side and the app start
    /// and set up in between, so the app's first action is at the run's time 0, not after its
    /// start-up. (0.5 s was too short at load 50-60: a ctor scenario's app, started once the
    /// mock's control port is up, finished setting up 60 ms after the epoch, 1.5 s at scale 25.)
    public var epochLead: Double

    public init(
      grace: Double = 1, epochLead: Double = 1, onEvent: (@Sendable (ScenarioEvent) -> Void)? = nil
    ) {
      self.grace = grace
      self.epochLead = epochLead
      self.onEvent = onEvent
    }
  }

  /// Runs `scenario` on `lane` off the cooperative pool; never throws: a setup failure becomes
  /// an inconclusive outcome whose `runError` says what went wrong.
  public static func run(_ scenario: Scenario, on lane: any Lane, options: Options) async
    -> ScenarioOutcome
  {
    let started = SystemClock()
    do {
      return try await BlockingIO.run("scenario.\(scenario.name)") {
        try runBlocking(scenario, on: lane, options: options)
      }
    } catch {
      return setupFailed(error, started: started)
    }
  }

  /// The outcome of a run that could not be set up: inconclusive, saying why.
  public static func setupFailed(_ error: any Error, started: SystemClock) -> ScenarioOutcome {
    ScenarioOutcome(
      audit: CaptureAudit(verdict: .inconclusive, inconclusiveReasons: ["\(error)"]),
      capture: CaptureStats(packets: 0, dropped: 0, positiveControlSeen: false),
      runError: "\(error)", wallSeconds: started.now)
  }

  public static func runBlocking(_ scenario: Scenario, on lane: any Lane, options: Options)
    throws -> ScenarioOutcome
  {
    let wallClock = SystemClock()
    let run = try lane.begin(scenario)
    defer { run.tearDown() }
    let sandbox = run.sandbox
    try sandbox.applyCensorRules(run.censorRules(at: 0))
    try run.beforeCapture()
    let capture = try sandbox.openDeviceCapture(
      allowed: try run.captureAllows(), pcapPath: run.capturePath)
    var captureStopped = false
    defer { if !captureStopped { _ = capture.stop() } }

    let actionsFile = run.workDirectory + "/actions.jsonl"
    let state = run.workDirectory + "/state"
    try ScenarioCommandLines.actionsFile(scenario).write(
      toFile: actionsFile, atomically: true, encoding: .utf8)
    try run.preferences().write(
      toFile: state + "/preferences.json", atomically: true, encoding: .utf8)
    try ScenarioCommandLines.directoryCache().write(
      toFile: state + "/" + GeoRelayDirectory.cacheFileName, atomically: true, encoding: .utf8)
    // The run's one clock: its epoch and scale go to the Tor side and the app on their command
    // lines; on a lane that does not share it, time 0 is now.
    let epoch =
      run.sharesRunClock ? MonotonicInstant.now.advanced(bySeconds: options.epochLead) : nil
    try run.startTorSide(epoch: epoch)

    let appOutput = run.workDirectory + "/app.jsonl"
    let clock = ScaledClock(factor: run.timeScale, epoch: epoch ?? .now)
    let runStart = clock.epochUnixTime
    let app = try DeviceCommand(
      run.appCommand(actionsFile: actionsFile, stateDirectory: state, epoch: epoch), in: sandbox,
      output: appOutput)
    defer { app.killTree() }

    // Timed changes on the Tor side and in the censor, in virtual time order.
    var changes = run.torSideChanges()
    for time in SandboxMapping.changeTimes(scenario.network) where time > 0 {
      changes.append((time, { try sandbox.applyCensorRules(run.censorRules(at: time)) }))
    }
    changes.sort { $0.time < $1.time }
    var harnessEvents = run.harnessEvents
    let stream = options.onEvent.map { EventStream(path: appOutput, onEvent: $0) }
    // The app ends itself after the scenario's duration; the lane's deadline gives slack.
    var appStatus: Int32?
    while appStatus == nil && clock.realSeconds(clock.now) < run.deadline {
      let virtualNow = clock.now
      let elapsed = clock.realSeconds(virtualNow)
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
      run.poll(elapsed: elapsed, appOutput: appOutput)
      appStatus = Spawner.poll(app.pid)
      if appStatus == nil { wallClock.sleepBlocking(seconds: 0.01) }
    }
    var runError: String?
    if appStatus == nil {
      runError = "the app did not finish within \(Int(run.deadline)) s (killed)"
    } else if appStatus != 0 {
      runError = "the app exited with status \(appStatus!): " + lastLines(appOutput)
    }
    runError = run.appEnded(runError: runError, appOutput: appOutput)
    // Keep capturing for the grace period: a late leak is still caught.
    wallClock.sleepBlocking(seconds: options.grace)
    app.killTree()
    run.stopTorSide()
    let report = capture.stop()
    captureStopped = true

    stream?.poll()
    let (events, parseErrors) = readEvents(appOutput)
    if runError == nil, !parseErrors.isEmpty {
      runError =
        "the app printed lines that are not events: "
        + parseErrors.prefix(3).joined(separator: " | ")
    }
    var outcome = ScenarioOutcome(
      appEvents: events, audit: report, runStart: runStart, timeScale: run.timeScale,
      pcapPath: run.keptPcapPath, runError: runError, wallSeconds: 0)
    run.complete(&outcome)
    outcome.wallSeconds = wallClock.now
    return outcome
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

  /// The last three lines of a file, for an error message.
  public static func lastLines(_ path: String) -> String {
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    return text.split(separator: "\n").suffix(3).joined(separator: " | ")
  }
}
