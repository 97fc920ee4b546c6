import Audit
import FailClosedSupport
import Foundation
import Sandbox
import Scenarios
import SystemUnderTest

/// The one pipeline every lane runs: the lane's sandbox and censor rules, the capture on the
/// device's link (proved live by the positive control), the Tor side, the app with the
/// scenario's actions, the timed changes (censor, Tor side), a grace period closed by the
/// capture's end marker, the audit, and the app's events, gathered into a ``ScenarioOutcome``
/// for the judge. The Tor side, the app and the pipeline's own timeline (censor changes,
/// crashes, the capture's axis) run on one clock: an epoch the pipeline makes and a scale, or
/// with ``Options/skipIdle`` on the mock lane the event clock, whose time only the pipeline
/// moves (``EventClockStepper``). On
/// the mock lane the epoch is fixed once both processes have set up and handed over on their
/// standard input (``EpochHandOver``); other lanes get it on the command line, a fixed lead
/// ahead.
public enum LanePipeline {
  public struct Options: Sendable {
    /// Real seconds to keep capturing after the app has ended, before the processes left are
    /// stopped and the end marker (``CaptureEndMarker``) closes the capture: what the app sent
    /// is caught by the marker alone; the grace is for what the app's tree still does after
    /// it (the real lane's tor). On the event clock it is skipped when nothing of the app's
    /// tree is left in the device.
    public var grace: Double
    /// Called with each event as it happens (the app's, and the harness's crashes and censor
    /// changes), on the pipeline's thread: `replay` streams them, so an interrupted run still
    /// shows what happened up to then.
    public var onEvent: (@Sendable (ScenarioEvent) -> Void)?
    /// Real seconds at least from handing the epoch over to its time 0 (``EpochHandOver``):
    /// the mock Tor opens its listeners and the app builds its objects (a few ms each when
    /// idle); under load the lead grows with the time they took to set up. A process that says
    /// it started past time 0 makes the run inconclusive. 0.25 s: at 0.1 s one app of six
    /// side by side at load 38 built its objects 17 ms past time 0 (lead 0.133 s).
    public var handOverLead: Double
    /// The event clock (``EventClock``, ``EventClockStepper``: time stands still while anything
    /// works and jumps idle time) on a lane that can take it (the mock lane's model); other
    /// lanes keep a plain scaled clock.
    public var skipIdle: Bool

    public init(
      grace: Double = 1, handOverLead: Double = 0.25,
      skipIdle: Bool = false, onEvent: (@Sendable (ScenarioEvent) -> Void)? = nil
    ) {
      self.grace = grace
      self.handOverLead = handOverLead
      self.skipIdle = skipIdle
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
    let startHold = StartGate.Hold(StartGate.shared)
    defer { startHold.release() }
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
    // The run's one clock: its epoch and scale go to the Tor side and the app, handed over
    // once both have set up; on a lane that keeps its own clock, time 0 is now.
    let appOutput = run.workDirectory + "/app.jsonl"
    let handOver = run.clockSharing == .own ? nil : EpochHandOver()
    var epoch: MonotonicInstant?
    // A event clock: a page in the run's directory that the Tor side and the app map.
    let page =
      options.skipIdle && run.clockSharing == .handOverSkipping
      ? try ClockPage.create(at: run.workDirectory + "/clock.page") : nil
    try run.startTorSide(handOver: handOver, clockPage: page?.path)
    var appCommand = run.appCommand(actionsFile: actionsFile, stateDirectory: state)
    if handOver != nil { appCommand += ["--epoch", EpochReceiver.optionValue] }
    if let page { appCommand += ["--clock-page", page.path] }
    let app = try DeviceCommand(
      appCommand, in: sandbox, output: appOutput,
      input: try handOver?.add("the app", output: appOutput))
    defer { app.killTree() }
    let appLaunched = wallClock.now
    if let handOver {
      // On the event clock no process can start late (time 0 waits for both): no lead.
      epoch = try handOver.fix(
        minimumLead: page == nil ? options.handOverLead : 0, timeout: Self.readyTimeout,
        leadFollowsSetUp: page == nil)
    }
    let clock = ScaledClock(factor: run.timeScale, epoch: epoch ?? .now)
    let runStart = clock.epochUnixTime
    let stepper = try page.map {
      EventClockStepper(
        page: $0, factor: run.timeScale, epoch: clock.epoch,
        harnessNamespaces: [try sandbox.world.inode(), try sandbox.censor.inode()],
        horizon: scenario.duration + Self.clockHorizonMargin)
    }

    // Timed changes on the Tor side and in the censor, in virtual time order.
    var changes = run.torSideChanges()
    for time in SandboxMapping.changeTimes(scenario.network) where time > 0 {
      changes.append((time, { try sandbox.applyCensorRules(run.censorRules(at: time)) }))
    }
    changes.sort { $0.time < $1.time }
    var harnessEvents = run.harnessEvents
    let stream = options.onEvent.map { EventStream(path: appOutput, onEvent: $0) }
    // The app ends itself after the scenario's duration; the lane's deadline gives slack. On
    // the event clock the wall time is the run's work, not its duration over the scale: a
    // loaded machine only makes it longer, so the deadline is the duration in real time.
    let deadline = page == nil ? run.deadline : max(run.deadline, scenario.duration + 20)
    var appStatus: Int32?
    // The event clock's turns are sub-millisecond sleeps, hundreds a run: the kernel's default
    // 50 µs of slack on each was a tenth of a short run's wall time.
    let slack = stepper == nil ? nil : ThreadTimerSlack.finest()
    defer { slack?.restore() }
    while appStatus == nil && MonotonicInstant.now.seconds(since: clock.epoch) < deadline {
      let virtualNow = stepper?.now ?? clock.now
      let elapsed = MonotonicInstant.now.seconds(since: clock.epoch)
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
      handOver?.collect()
      if startHold.isHeld,
        Self.hasOutput(appOutput) || wallClock.now - appLaunched > StartGate.releaseAfter
      {
        startHold.release()
      }
      appStatus = Spawner.poll(app.pid)
      guard appStatus == nil else { break }
      // The event clock moves only once both processes have finished setting up: its first
      // move is to time 0 (the page starts before it), so nothing of the run starts late.
      if let stepper, handOver?.allStarted ?? false {
        // After a jump the loop turns once the waiters due have woken: a change due at the
        // new time applies first.
        if case .jump = stepper.tryJump(pipelineNext: changes.first?.time) {
          stepper.awaitDueWaiters()
          continue
        }
        wallClock.sleepBlocking(seconds: stepper.pollGap)
      } else {
        wallClock.sleepBlocking(seconds: 0.01)
      }
    }
    var runError: String?
    var interrupted = false
    if appStatus == nil {
      runError = "the app did not finish within \(Int(deadline)) s (killed)"
    } else if let signal = AppEndSignal(status: appStatus!) {
      // The pipeline signals the app only after this loop: this one came from outside the run.
      interrupted = true
      runError =
        "the app was ended by \(signal.name), which the run did not send: "
        + lastLines(appOutput)
    } else if appStatus != 0 {
      runError = "the app exited with status \(appStatus!): " + lastLines(appOutput)
    }
    handOver?.collect()
    var lateStart = false
    // On the event clock a late set-up cannot make anything late: time 0 waits for it.
    if runError == nil, stepper == nil, let late = handOver?.lateStarts.first {
      lateStart = true
      runError =
        "\(late.name) finished setting up \(String(format: "%.3f", late.seconds)) s after the "
        + "run's time 0 (the hand-over's lead was "
        + "\(String(format: "%.3f", handOver?.lead ?? 0)) s): its first steps were late"
    }
    runError = run.appEnded(runError: runError, appOutput: appOutput)
    // What the app's tree still does after it is caught for the grace period; then nothing is
    // left in the device, and once the capture has read the end marker it has read every
    // packet sent before it. On the event clock (the mock's model) an app with nothing of its
    // tree left in the device has nothing left to send: no grace.
    if page == nil || !app.processesInDevice().isEmpty {
      wallClock.sleepBlocking(seconds: options.grace)
    }
    app.killTree()
    run.stopTorSide()
    if !CaptureEndMarker.confirm(capture, sandbox: sandbox, timeout: Self.endMarkerTimeout) {
      capture.noteInconclusive(
        InconclusiveReason(
          .captureError,
          "the end marker to \(AddressPlan.controlTarget) was not captured within "
            + "\(Int(Self.endMarkerTimeout)) s: the capture may have missed the run's last packets"
        ))
    }
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
      clockSkip: stepper.map { ClockSkip(jumps: $0.jumps) },
      pcapPath: run.keptPcapPath, runError: runError, wallSeconds: 0)
    outcome.lateStart = lateStart
    outcome.interrupted = interrupted
    run.complete(&outcome)
    outcome.wallSeconds = wallClock.now
    return outcome
  }

  /// Virtual seconds past the scenario's duration that the event clock may still move: the
  /// app ends at its duration; a little more lets its last steps run.
  static let clockHorizonMargin = 5.0
  /// Real seconds the Tor side and the app have to say ready (a start slowed by load).
  static let readyTimeout = 30.0
  /// Real seconds the capture has to read the end marker.
  static let endMarkerTimeout = 5.0

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

  /// Whether the app has written anything yet (its first event: it is up).
  static func hasOutput(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && info.st_size > 0
  }

  /// The last three lines of a file, for an error message.
  public static func lastLines(_ path: String) -> String {
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    return text.split(separator: "\n").suffix(3).joined(separator: " | ")
  }
}
