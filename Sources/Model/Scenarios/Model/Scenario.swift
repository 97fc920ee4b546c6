import TorControl
import Vocabulary

/// One scenario file: a test plan a reviewer can read. What Tor does, what the censor does,
/// what the app does over virtual time, and what must (not) happen.
public struct Scenario: Sendable, Equatable {
  /// The file's name without directory and extension, e.g. `stall-past-75s`; what `--filter`
  /// and reports use.
  public var name: String
  /// The file path as given to the loader, for messages.
  public var path: String
  public var title: String
  /// One sentence: what a pass of this scenario proves.
  public var proves: String
  /// Which of the system under test's documented weaknesses (1...4) this scenario shows.
  public var weakness: Int?
  /// A known gap of the profile this scenario shows (bitchat has no bridges), in a sentence.
  public var gap: String?
  /// Why the verdict must be the same without the faults (DNS poisoning that the app never
  /// sees): `check --mutate` then holds the scenario to an unchanged verdict instead.
  public var sameWithoutFaults: String?
  /// How long the scenario runs, in virtual seconds (real seconds on the real-Tor lane).
  public var duration: Double
  /// The Tor side: the mock's plan, or Debian's tor driven by the app on the real-Tor lane.
  public var tor: TorSide
  public var network: NetworkPlan
  public var app: AppPlan
  public var expectations: [ScenarioExpectation]
  /// Where a scenario converted from an OONI measurement came from (`failclosed ooni convert`).
  public var ooni: OONIProvenance? = nil

  public init(
    name: String, path: String, title: String, proves: String, weakness: Int? = nil,
    gap: String? = nil, duration: Double, tor: TorSide, network: NetworkPlan = NetworkPlan(),
    app: AppPlan, expectations: [ScenarioExpectation]
  ) {
    self.name = name
    self.path = path
    self.title = title
    self.proves = proves
    self.weakness = weakness
    self.gap = gap
    self.duration = duration
    self.tor = tor
    self.network = network
    self.app = app
    self.expectations = expectations
  }

  /// A mock-lane scenario.
  public init(
    name: String, path: String, title: String, proves: String, weakness: Int? = nil,
    duration: Double, tor: TorPlan, network: NetworkPlan = NetworkPlan(), app: AppPlan,
    expectations: [ScenarioExpectation]
  ) {
    self.init(
      name: name, path: path, title: title, proves: proves, weakness: weakness,
      duration: duration, tor: .mock(tor), network: network, app: app,
      expectations: expectations)
  }

  public var lane: Lane { tor.lane }

  /// A canary expects a leak to be caught: it proves the detector fires.
  public var isCanary: Bool {
    expectations.contains { $0.as(ScenarioExpectation.LeakCaught.self) != nil }
  }
}

/// Where a scenario runs: against the mock Tor on a scaled clock, or against Debian's tor in a
/// private Tor network in real time.
public enum Lane: String, Sendable, CaseIterable {
  case mock
  case realTor = "real-tor"
}

/// The Tor side of a scenario, by lane.
public enum TorSide: Sendable, Equatable {
  case mock(TorPlan)
  case realTor(RealTorPlan)

  public var lane: Lane {
    switch self {
    case .mock: return .mock
    case .realTor: return .realTor
    }
  }

  /// The mock's plan (mock lane only).
  public var mock: TorPlan? {
    if case .mock(let plan) = self { return plan }
    return nil
  }

  /// Debian's tor (real-Tor lane only).
  public var real: RealTorPlan? {
    if case .realTor(let plan) = self { return plan }
    return nil
  }

  /// One line for reports: "ctor healthy:5", "debian-tor, bridges testnet-obfs4".
  public var summary: String {
    switch self {
    case .mock(let plan): return "\(plan.personality.rawValue) \(plan.bootstrap)"
    case .realTor(let plan):
      return plan.client.rawValue
        + (plan.bridges.isEmpty
          ? "" : ", bridges " + plan.bridges.map(\.rawValue).joined(separator: ", "))
    }
  }
}

/// The real-Tor lane's Tor side: Debian's tor, started and driven by the app in the device,
/// bootstrapping from the private network; bridges seeded into the app's preferences.
public struct RealTorPlan: Sendable, Equatable {
  public enum Client: String, Sendable, CaseIterable {
    /// Debian's tor package, driven through its control port as Onion Browser does.
    case debianTor = "debian-tor"
  }

  /// A bridge by name; the runner substitutes the network's bridge line at run time.
  public enum Bridge: String, Sendable, CaseIterable {
    /// The private network's obfs4 bridge.
    case testnetObfs4 = "testnet-obfs4"
  }

  public var client: Client
  /// Seeded into the app's preferences (`tor.bridges`); the profile decides whether it uses them.
  public var bridges: [Bridge]

  public init(client: Client = .debianTor, bridges: [Bridge] = []) {
    self.client = client
    self.bridges = bridges
  }
}

/// The Tor side: the mock's personality, its bootstrap plan, per-destination faults, a crash.
public struct TorPlan: Sendable, Equatable {
  public enum Personality: String, Sendable, CaseIterable {
    /// Arti in process (bitchat): progress 0 or 100, SOCKS bound only after bootstrap.
    case arti
    /// C tor (Onion Browser): tagged phases, a control port.
    case ctor
  }

  /// Which of two overlapping Arti bootstraps ends first, when the app restarts Tor while a
  /// bootstrap is pending (lib.rs lets the stopped one go on). With a real Arti its retry
  /// schedule decides; a scenario fixes it so the outcome is the same every run. bitchat's own
  /// code only (arti.h, docs/findings/bitchat-arti-restart-race.md): the model's TorManager
  /// has no such overlap.
  public enum BootstrapEndOrder: String, Sendable, CaseIterable {
    /// As they happen.
    case asTheyHappen = "as-they-happen"
    /// The stopped instance's bootstrap ends after the new one's.
    case stoppedLast = "stopped-last"
    /// The new instance's bootstrap ends after the stopped one's task has exited.
    case stoppedFirst = "stopped-first"
  }

  public var personality: Personality
  /// The mock's bootstrap plan as written: "healthy:5", "stall:conn:timeout", "never",
  /// "flap:10", "crash:30". ``plan`` is its parsed form.
  public var bootstrap: String
  public var faults: [StreamFault]
  /// Virtual second at which the Tor process crashes, if it does.
  public var crashAt: Double?
  /// nil: as they happen.
  public var bootstrapEndOrder: BootstrapEndOrder?

  public init(
    personality: Personality, bootstrap: String, faults: [StreamFault] = [],
    crashAt: Double? = nil, bootstrapEndOrder: BootstrapEndOrder? = nil
  ) {
    self.personality = personality
    self.bootstrap = bootstrap
    self.faults = faults
    self.crashAt = crashAt
    self.bootstrapEndOrder = bootstrapEndOrder
  }
}

extension TorPlan {
  /// The parsed plan for the mock (the parser already checked that it parses).
  public var plan: BootstrapPlan? { try? BootstrapPlan(parsing: bootstrap) }
}

/// A fault the mock applies to streams towards one destination: a kind of
/// ``StreamFaultKinds/all`` (toxiproxy's vocabulary) and the values of its fields.
public struct StreamFault: Sendable, Equatable {
  /// "host:port" as the app names it, e.g. "relay.damus.io:443".
  public var destination: String
  public var kind: StreamFaultKind
  /// The kind's fields by name, the defaults of those left out filled in (["ms": 200]).
  public var values: [String: Int]

  public init(destination: String, kind: StreamFaultKind, values: [String: Int] = [:]) {
    self.destination = destination
    self.kind = kind
    self.values = kind.completed(values)
  }

  /// The SPEC of the mock's `--fault HOST=SPEC` (toxics, comma-separated).
  public var mockSpec: String { kind.mockSpec(values) }
}

/// The censor between the device and the world.
public struct NetworkPlan: Sendable, Equatable {
  public var censor: [CensorPlanRule]
  public var dnsPoisoning: [DNSPoisoning]

  public init(censor: [CensorPlanRule] = [], dnsPoisoning: [DNSPoisoning] = []) {
    self.censor = censor
    self.dnsPoisoning = dnsPoisoning
  }
}

/// One nftables rule in the censor namespace, in the Sandbox's vocabulary (Sandbox.CensorPlanRule)
/// with a symbolic target instead of an address, and an optional time window.
public struct CensorPlanRule: Sendable, Equatable {
  /// Vocabulary's one list; scenario files write all but poison-dns as rules
  /// (``CensorAction/scenarioRules``).
  public typealias Action = CensorAction

  public enum TransportProtocol: String, Sendable, CaseIterable {
    case tcp, udp, icmp
  }

  public var action: Action
  public var target: CensorTarget
  public var port: Int?
  /// nil matches every protocol.
  public var transport: TransportProtocol?
  /// Matches only packets whose IP length is greater than this: a crude DPI that lets a SYN
  /// through and drops a TLS ClientHello.
  public var longerThan: Int?
  /// Virtual seconds during which the rule is in force; nil means from the start / to the end.
  public var from: Double?
  public var until: Double?
  /// Where the rule came from, for a replayed measurement: "RU 2023-01-21 AS197467, 9/10
  /// or_port_dirauth generic_timeout_error" (`from` is already the time window's start).
  public var measured: String? = nil

  public init(
    action: Action, target: CensorTarget, port: Int? = nil, transport: TransportProtocol? = nil,
    longerThan: Int? = nil, from: Double? = nil, until: Double? = nil
  ) {
    self.action = action
    self.target = target
    self.port = port
    self.transport = transport
    self.longerThan = longerThan
    self.from = from
    self.until = until
  }

  /// Whether the rule is in force at virtual time `t`.
  public func isActive(at t: Double) -> Bool {
    (from.map { t >= $0 } ?? true) && (until.map { t < $0 } ?? true)
  }
}

/// A scenario converted from an OONI measurement: the file, the measurement and how it was
/// mapped, as the converted file states it.
public struct OONIProvenance: Sendable, Equatable {
  /// The measurement file's name.
  public var source: String
  /// "tor 0.4.0, RU 2023-01-21 23:58:05 AS197467 (...)".
  public var measurement: String
  /// Why the file was converted although it is not censorship (`--force`), if it was.
  public var notCensorship: [String]
  /// How classes and stops were mapped, and what could not be.
  public var notes: [String]

  public init(
    source: String, measurement: String, notCensorship: [String] = [], notes: [String] = []
  ) {
    self.source = source
    self.measurement = measurement
    self.notCensorship = notCensorship
    self.notes = notes
  }
}

/// A lie the censor tells about one name (and its subdomains).
public struct DNSPoisoning: Sendable, Equatable {
  public enum Answer: String, Sendable, CaseIterable {
    /// Answers with an address of the censor's where nothing listens.
    case sinkhole
  }

  public var name: String
  public var answer: Answer

  public init(name: String, answer: Answer) {
    self.name = name
    self.answer = answer
  }
}

/// The app: which profile, its starting state, and what the user and the OS do to it.
public struct AppPlan: Sendable, Equatable {
  public enum Profile: String, Sendable, CaseIterable {
    /// bitchat's rules and numbers, weaknesses included.
    case bitchat
    /// bitchat with each documented weakness fixed.
    case hardened
    /// Foundation's URLSession with a SOCKS proxy dictionary: leaks on Linux (a canary).
    case naivePort = "naive-port"
    /// Onion Browser 1.X, 2.X or 3.X: tor through its control port (the mock's ctor
    /// personality, or Debian's tor on the real lane), URLs through that version's schemes.
    case onionBrowser1 = "onion-browser-1"
    case onionBrowser2 = "onion-browser-2"
    case onionBrowser3 = "onion-browser-3"
    /// The current release (3.X): an alias of onion-browser-3.
    case onionBrowser = "onion-browser"
    /// bitchat's own code, unmodified (the bitchat-source lane): the driver built from a
    /// bitchat checkout with the project's shims, in real time (bitchat reads the wall clock).
    case bitchatSource = "bitchat-source"
    /// Any program, as a black box (``ProgramSpec``): `leak-audit --app -- CMD` puts the
    /// command into the library's program scenarios (Scenarios/program).
    case program

    /// One of Onion Browser's versions.
    public var isOnionBrowser: Bool {
      [.onionBrowser1, .onionBrowser2, .onionBrowser3, .onionBrowser].contains(self)
    }

    /// The steps this profile's app models (onion-browser-N: start, open-url, path-change,
    /// background, foreground).
    public func models(_ step: AppAction.Step, verbs: [ActionVerb] = ActionVerbs.all) -> Bool {
      guard let verb = ActionVerbs.verb(named: step.name, in: verbs) else { return false }
      // The harness's own verbs act on the mock Tor, whatever the app.
      if verb.performer == .mockTor { return true }
      // A black box is only started: nothing else can be done to it from outside.
      if self == .program { return verb.name == ActionVerbs.start.name }
      return verb.apps.contains(isOnionBrowser ? .onionBrowser : .bitchat)
    }

    /// The verbs this profile's model acts on, as written.
    public func modelledVerbs(in verbs: [ActionVerb] = ActionVerbs.all) -> [String] {
      verbs.filter(\.inScenarios).map(\.name).filter {
        models(AppAction.Step(verb: $0, scenarioArgument: nil), verbs: verbs)
      }
    }
  }

  public var profile: Profile
  /// The user's "route through Tor" preference at start.
  public var torPreference: Bool
  /// Whether network activation is allowed at start.
  public var activationGranted: Bool
  /// Relays the user added before the scenario starts.
  public var customRelays: [String]
  /// In time order (the parser sorts stably by `at`).
  public var actions: [AppAction]
  /// The program profile's command (nil in a library file until `--app` gives one).
  public var program: ProgramSpec?

  public init(
    profile: Profile, torPreference: Bool = true, activationGranted: Bool = true,
    customRelays: [String] = [], actions: [AppAction], program: ProgramSpec? = nil
  ) {
    self.profile = profile
    self.torPreference = torPreference
    self.activationGranted = activationGranted
    self.customRelays = customRelays
    self.actions = actions
    self.program = program
  }
}

/// One step at a virtual time.
public struct AppAction: Sendable, Equatable {
  /// The one typed action (Vocabulary); scenario files read it with
  /// ``ActionStep/init(verb:scenarioArgument:)``.
  public typealias Step = ActionStep

  public var at: Double
  public var step: Step

  public init(at: Double, step: Step) {
    self.at = at
    self.step = step
  }
}
