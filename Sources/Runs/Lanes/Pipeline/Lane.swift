import Audit
import FailClosedSupport
import Sandbox
import Scenarios

/// What makes one lane differ from another: what starts the Tor side, what starts the app,
/// what the capture allows. ``LanePipeline`` runs every lane through the same steps; a lane
/// only answers its hooks (``LaneRun``).
public protocol Lane: Sendable {
  /// Sets one scenario up on this lane: its sandbox (a fresh one, or the lane's own), its
  /// work directory, the world's CA. Throws when the scenario is not for this lane or the
  /// setup fails (the pipeline's caller turns that into an inconclusive outcome).
  func begin(_ scenario: Scenario) throws -> any LaneRun
}

/// One scenario on one lane: the hooks ``LanePipeline`` calls, in its order.
public protocol LaneRun: AnyObject {
  var scenario: Scenario { get }
  var sandbox: SandboxRun { get }
  /// The run's files: actions.jsonl, state/ (preferences, the relay cache), app.jsonl.
  var workDirectory: String { get }
  /// Where the capture is written, and what reports name (nil: it is not kept).
  var capturePath: String { get }
  var keptPcapPath: String? { get }
  /// The world's CA, which the app trusts for the world's TLS hosts.
  var trustAnchors: String { get }
  /// Virtual seconds per real second (1: real time).
  var timeScale: Double { get }
  /// How the Tor side and the app keep time (``RunClockSharing``): the pipeline hands them the
  /// run's epoch, and a skipping clock, only as this says.
  var clockSharing: RunClockSharing { get }
  /// Real seconds after the app's start at which it is given up on (killed).
  var deadline: Double { get }
  /// The censor's rules in force at virtual time `t`: applied at 0 and at each change.
  func censorRules(at t: Double) -> [Sandbox.CensorRule]
  /// Harness traffic that must stay out of the capture (OONI replay's probes).
  func beforeCapture() throws
  /// What the capture allows: the Tor side's endpoints, nothing else.
  func captureAllows() throws -> AllowedEndpoints
  /// The app's starting preferences (its UserDefaults), as JSON.
  func preferences() throws -> String
  /// Starts the Tor side in the device (the mock), or lays out what the app starts itself.
  /// `handOver`: the run's epoch hand-over, which a Tor process of its own joins (nil when
  /// the lane keeps its own clock); `clockPage`: the skipping clock's page, which it maps
  /// (only for ``RunClockSharing/handOverSkipping`` when the run skips idle time).
  func startTorSide(handOver: EpochHandOver?, clockPage: String?) throws
  /// The app's command line in the device; the pipeline adds `--epoch stdin` and
  /// `--clock-page` as the lane's clock sharing says.
  func appCommand(actionsFile: String, stateDirectory: String) -> [String]
  /// Faults done to the Tor side at virtual times (the mock's crashes).
  func torSideChanges() -> [(time: Double, apply: () throws -> Void)]
  /// The harness's own events on the scenario's time axis (crashes, censor changes).
  var harnessEvents: [ScenarioEvent] { get }
  /// Each turn of the wait for the app, `elapsed` real seconds after the run's time 0.
  func poll(elapsed: Double, appOutput: String)
  /// Once the app has ended (or was given up on): the run error, with what the Tor side adds
  /// (the mock ended early); the Tor side is asked to stop before the grace period.
  func appEnded(runError: String?, appOutput: String) -> String?
  /// After the grace period: the Tor side stopped for good.
  func stopTorSide()
  /// What only the lane knows, added to the outcome (tor's log, the exit fetch, probes).
  func complete(_ outcome: inout ScenarioOutcome)
  /// Every exit path: undoes what ``Lane/begin(_:)`` set up.
  func tearDown()
}

extension LaneRun {
  public var harnessEvents: [ScenarioEvent] { [] }
  public func beforeCapture() throws {}
  public func torSideChanges() -> [(time: Double, apply: () throws -> Void)] { [] }
  public func poll(elapsed: Double, appOutput: String) {}
  public func appEnded(runError: String?, appOutput: String) -> String? { runError }
  public func stopTorSide() {}
  public func complete(_ outcome: inout ScenarioOutcome) {}
}

/// How a lane's processes keep time: the lane's whole contract with the run's one clock.
public enum RunClockSharing: Sendable, Equatable {
  /// Their own clocks: the run's time 0 is the app's start (bitchat's code reads the wall
  /// clock from its own launch).
  case own
  /// The run's epoch, handed over once they have set up (`--epoch stdin`, ``EpochHandOver``).
  case handOver
  /// The same, and a clock that jumps idle time (`--clock-page`) when the run asks for it:
  /// the mock lane's model.
  case handOverSkipping
}
