import Audit
import Vocabulary

/// Everything one run of a scenario produced, as the judge and the reports read it. The runner
/// fills it from the sandbox, the app's JSON events, the mock's bootstrap timeline and the
/// audit. Every time is in virtual seconds since the scenario started (the runner converts
/// capture timestamps with the clock's scale), so events, bootstrap and packets share one axis.
public struct ScenarioOutcome: Sendable, Equatable {
  public var events: [ScenarioEvent]
  public var bootstrap: [BootstrapSample]
  /// tor's own timeline as its controller saw it (bootstrap phases, problems, the commands the
  /// controller sent) and, on the real-Tor lane, as tor's log showed it. Empty for Arti.
  public var torTimeline: [TorTimelineEntry]
  /// Real-Tor lane: whether a fetch through the exit (from the device, through the app's tor)
  /// succeeded once tor reported 100%; nil when none was tried.
  public var fetchThroughExit: Bool?
  public var audit: CaptureAudit
  public var capture: CaptureStats
  /// Set when the run could not complete (setup error, the app crashed): the verdict is then
  /// inconclusive whatever else was seen, unless a leak was caught.
  public var runError: String?
  /// Real seconds the run took.
  public var wallSeconds: Double
  /// Real-Tor lane, a replayed measurement: each node probed from the device before the app
  /// started, as OONI's `tor` test probes its targets; nil when not probed.
  public var reachability: [ReachabilityResult]? = nil
  /// Mock lane with a event clock: the idle time it jumped; nil on a plain clock.
  public var clockSkip: ClockSkip? = nil
  /// How much later, as a fraction of a deadline, the app's own timers may fire: 0 for the
  /// model (its timers are the run's clock); ``ScenarioOutcome/realTimeTimerDrift`` for code
  /// that sleeps on the wall clock. A `by` deadline is judged at `by x (1 + timerDrift)`.
  public var timerDrift: Double = 0
  /// bitchat's code counts its 75 s bootstrap deadline in 75 one-second sleeps, each of which
  /// wakes a little late: TorBootstrapDidStall came at 75.04-75.12 s with 6 runs side by side,
  /// 75.2-76.07 s with every run of the main job side by side. 1% of a deadline (0.75 s of 75 s)
  /// is that drift; what a scenario checks (a stall at 75 s, not at 120) is kept.
  public static let realTimeTimerDrift = 0.01
  /// The Tor side or the app finished setting up after the run's time 0 (the hand-over's
  /// lead too short under load): `runError` says so; the harness's fault, like a late action.
  public var lateStart = false
  /// The app ended on a signal the run did not send (SIGTERM, SIGINT, SIGKILL before the
  /// harness stopped it: another program on the machine, the OOM killer): `runError` names it,
  /// and what the app did after it is missing; the harness's fault, like a late start.
  public var interrupted = false
  /// Earlier runs of the same scenario set aside because the harness made them late
  /// (``ActionTiming``), each one's reason; this outcome is the run after them.
  public var earlierRuns: [String] = []

  public init(
    events: [ScenarioEvent] = [], bootstrap: [BootstrapSample] = [],
    torTimeline: [TorTimelineEntry] = [], fetchThroughExit: Bool? = nil, audit: CaptureAudit,
    capture: CaptureStats, runError: String? = nil, wallSeconds: Double = 0
  ) {
    self.events = events
    self.bootstrap = bootstrap
    self.torTimeline = torTimeline
    self.fetchThroughExit = fetchThroughExit
    self.audit = audit
    self.capture = capture
    self.runError = runError
    self.wallSeconds = wallSeconds
  }
}

extension ScenarioOutcome {
  /// What the harness did to the run (Tor crashes, censor changes), for the reports' text:
  /// "30 s: Tor crashed (crashAt)", "10 s: censor now: drop tor-guards".
  public var harnessLines: [String] {
    events.compactMap { event in
      switch event.name {
      case ScenarioEventKind.torCrashed.name:
        return "\(ExpectationJudge.seconds(event.time)): Tor crashed (\(event.fields["by"] ?? "?"))"
      case ScenarioEventKind.censorChanged.name:
        return
          "\(ExpectationJudge.seconds(event.time)): censor now: \(event.fields["active"] ?? "?")"
      default: return nil
      }
    }
  }
}

/// One event the app emitted (`failclosed app` JSON line). Names in ``ScenarioEventCatalogue``.
public struct ScenarioEvent: Sendable, Equatable {
  public var time: Double
  public var name: String
  /// Values as strings: "true"/"false" for Booleans.
  public var fields: [String: String]

  public init(time: Double, name: String, fields: [String: String] = [:]) {
    self.time = time
    self.name = name
    self.fields = fields
  }
}

/// One event name scenario files and the judge use, whole: its name, the field keys it can
/// carry, where it comes from and which apps emit it. Listed once, in
/// ``ScenarioEventCatalogue/all``; the names code refers to are the statics below. The
/// notifications keep bitchat's names; ``ScenarioEvent/init(_:)`` (Lanes) maps the app
/// driver's lines onto these.
public struct ScenarioEventKind: Sendable, Hashable {
  public enum Source: Sendable, Hashable {
    /// Posted by TorManager or NetworkActivationService: the `notification` expectations name
    /// these.
    case torNotification
    /// Another notification of the app's.
    case appNotification
    /// A line of the app driver's output (state, socket, request, relay ...).
    case driver
    /// The harness's own doing (the mock killed, the censor changed).
    case harness
  }

  public let name: String
  public let fields: [String]
  public let source: Source
  public let emittedBy: AppFamilies

  public init(
    _ name: String, _ fields: [String] = [], source: Source = .driver,
    emittedBy: AppFamilies = .bitchat
  ) {
    self.name = name
    self.fields = fields
    self.source = source
    self.emittedBy = emittedBy
  }

  /// Field keys of events normalised from the driver's `request` lines.
  public static let requestFields = [
    "url", "via", "transport", "phase", "status", "error", "source",
  ]
  public static let relayFields = [
    "relay", "phase", "kind", "target", "error", "via", "delay", "attempt",
  ]
  public static let messageFields = ["phase", "id", "kind", "relay", "reason", "sub"]
  public static let directoryFields = [
    "phase", "source", "count", "delay", "reason", "url", "attempt",
  ]
  public static let torFields = [
    "phase", "progress", "tag", "summary", "reason", "count", "command", "detail",
  ]

  public static let torWillStart = ScenarioEventKind("TorWillStart", source: .torNotification)
  public static let torDidBecomeReady = ScenarioEventKind(
    "TorDidBecomeReady", source: .torNotification)
  public static let torWillRestart = ScenarioEventKind("TorWillRestart", source: .torNotification)
  public static let torBootstrapDidStall = ScenarioEventKind(
    "TorBootstrapDidStall", source: .torNotification)
  /// enabled=true|false.
  public static let torUserPreferenceChanged = ScenarioEventKind(
    "TorUserPreferenceChanged", ["enabled"], source: .torNotification)
  /// TorManager.isReady changed: isReady=true|false.
  public static let readyChanged = ScenarioEventKind("ready-changed", ["isReady"], emittedBy: .all)
  /// TorURLSession's proxy mode: useTor=true|false.
  public static let proxyMode = ScenarioEventKind("proxy-mode", ["useTor"])
  /// A socket the app opened: endpoint, transport=tor|direct|naive|probe|control, purpose.
  public static let socketOpened = ScenarioEventKind(
    "socket-opened", ["endpoint", "transport", "target", "purpose"], emittedBy: .all)
  /// A request started on a transport: transport=tor|direct|naive, url.
  public static let requestSent = ScenarioEventKind(
    "request-sent", requestFields, emittedBy: .all)
  /// A request or relay connect that failed: kind, target, error.
  public static let requestFailed = ScenarioEventKind(
    "request-failed", Array(Set(requestFields + relayFields)).sorted(), emittedBy: .all)
  /// A message or relay connect parked until Tor is ready: kind=message|relay, target.
  public static let requestQueued = ScenarioEventKind(
    "request-queued", Array(Set(relayFields + messageFields)).sorted())
  /// Relay settings: relay-added url; relay-rejected url, reason=malformed|alreadyPresent|limitReached.
  public static let relayAdded = ScenarioEventKind(
    "relay-added", ["relay", "phase", "kind", "target", "url"])
  public static let relayRejected = ScenarioEventKind(
    "relay-rejected", ["relay", "phase", "kind", "target", "url", "reason", "error"])
  /// GeoRelayDirectory loaded its list: source=cache|bundle|remote.
  public static let directoryLoaded = ScenarioEventKind("directory-loaded", directoryFields)
  /// The app performed a timed action (action=VERB, argument): when it did, against the file's
  /// time (``ActionTiming``).
  public static let action = ScenarioEventKind("action", ["action", "argument"], emittedBy: .all)
  /// The harness killed the mock Tor (a `crash:S` plan, `crashAt`, a `tor-crash` action):
  /// by=plan|action.
  public static let torCrashed = ScenarioEventKind(
    "tor-crashed", ["by"], source: .harness, emittedBy: .all)
  /// The censor's rules changed (a rule's `from` or `until`): rules=N in force.
  public static let censorChanged = ScenarioEventKind(
    "censor-changed", ["rules", "active"], source: .harness, emittedBy: .all)
}

/// The bootstrap state at a moment, as TorManager read it.
public struct BootstrapSample: Sendable, Equatable {
  public var time: Double
  public var progress: Int
  public var summary: String

  public init(time: Double, progress: Int, summary: String) {
    self.time = time
    self.progress = progress
    self.summary = summary
  }
}

/// What the audit concluded about the capture.
public struct CaptureAudit: Sendable, Equatable {
  public var verdict: Verdict
  /// Why the capture cannot decide (drops, late start, missing positive control).
  public var inconclusiveReasons: [String]
  /// Every flow that left the device to a destination outside the allowed Tor addresses.
  public var leaks: [ScenarioLeak]
  /// Packets per class over time for the timeline: "tor", "link-control", "control" and the
  /// leak classes' raw values.
  public var traffic: [TrafficSample]
  /// The flows to allowed Tor addresses, for `flows-only-to`.
  public var torFlows: [TorFlow]

  public init(
    verdict: Verdict, inconclusiveReasons: [String] = [], leaks: [ScenarioLeak] = [],
    traffic: [TrafficSample] = [], torFlows: [TorFlow] = []
  ) {
    self.verdict = verdict
    self.inconclusiveReasons = inconclusiveReasons
    self.leaks = leaks
    self.traffic = traffic
    self.torFlows = torFlows
  }
}

/// One flow between the device and an allowed Tor address (a relay, the bridge, the guard).
public struct TorFlow: Sendable, Equatable {
  public var source: String
  public var sourcePort: Int
  public var destination: String
  public var destinationPort: Int
  public var packets: Int

  public init(
    source: String, sourcePort: Int, destination: String, destinationPort: Int, packets: Int
  ) {
    self.source = source
    self.sourcePort = sourcePort
    self.destination = destination
    self.destinationPort = destinationPort
    self.packets = packets
  }

  /// Either end's port is one of `ports` (a flow is named by whoever sent its first packet).
  public func touches(_ ports: Set<Int>) -> Bool {
    ports.contains(sourcePort) || ports.contains(destinationPort)
  }
}

/// One leaking flow with its evidence.
public struct ScenarioLeak: Sendable, Equatable {
  public var leakClass: LeakClass
  /// "10.77.3.2:443", "[fd00::2]:53"
  public var destination: String
  /// "tcp", "udp", "icmp", ...
  public var transport: String
  /// DNS question names, TLS SNI and HTTP Host names seen in the clear.
  public var names: [String]
  public var firstTime: Double
  public var lastTime: Double
  public var packets: Int
  public var bytes: Int
  /// The audit's evidence: why it is a leak (forged-source, icmp-error-misdirected, ...),
  /// which way it went, what the first packet showed (a forged source, a quoted flow), and
  /// its first bytes in hex.
  public var reason: String?
  public var direction: String?
  public var evidence: String?
  public var sample: String?

  public init(
    leakClass: LeakClass, destination: String, transport: String, names: [String] = [],
    firstTime: Double, lastTime: Double, packets: Int, bytes: Int, reason: String? = nil,
    direction: String? = nil, evidence: String? = nil, sample: String? = nil
  ) {
    self.reason = reason
    self.direction = direction
    self.evidence = evidence
    self.sample = sample
    self.leakClass = leakClass
    self.destination = destination
    self.transport = transport
    self.names = names
    self.firstTime = firstTime
    self.lastTime = lastTime
    self.packets = packets
    self.bytes = bytes
  }
}

/// Packets of one class seen in one time bucket starting at `time`.
public struct TrafficSample: Sendable, Equatable {
  public var time: Double
  public var trafficClass: String
  public var packets: Int

  public init(time: Double, trafficClass: String, packets: Int) {
    self.time = time
    self.trafficClass = trafficClass
    self.packets = packets
  }
}

/// The capture's own statistics (pcap_stats and the start synchronisation).
public struct CaptureStats: Sendable, Equatable {
  public var packets: Int
  /// ps_drop + ps_ifdrop: above zero makes the audit inconclusive.
  public var dropped: Int
  public var positiveControlSeen: Bool
  /// The pcap file, kept for failed scenarios or with --keep-pcaps.
  public var pcapPath: String?

  public init(packets: Int, dropped: Int, positiveControlSeen: Bool, pcapPath: String? = nil) {
    self.packets = packets
    self.dropped = dropped
    self.positiveControlSeen = positiveControlSeen
    self.pcapPath = pcapPath
  }
}
