/// What one side of a comparison (`leak-audit --compare A,B`) showed in one scenario, reduced
/// to what both systems under test can report: the model's driver writes more events than
/// bitchat's code lets the bitchat-source driver see (docs/bitchat-source.md, "What the driver
/// cannot see"), so only the shared vocabulary is kept. Codable: a comparison's report.json
/// carries both sides, and `--compare-reuse` reads one side back instead of running it again.
public struct ComparisonObservation: Sendable, Equatable, Codable {
  public struct Expectation: Sendable, Equatable, Codable {
    public var sentence: String
    public var status: String
    public var reason: String
  }

  /// One milestone and when it first happened (scenario seconds).
  public struct Milestone: Sendable, Equatable, Codable {
    public var label: String
    public var time: Double
  }

  public var verdict: String
  public var runError: String?
  public var expectations: [Expectation]
  /// Each of bitchat's notifications and the times it was posted, by name.
  public var notifications: [String: [Double]]
  /// The first time of each milestone (notifications, each change of readiness, proxy mode,
  /// the first relay connect and request on each route, leaks), in time order.
  public var milestones: [Milestone]
  /// Distinct relay connects: "wss://relay.example:443 via tor".
  public var connections: [String]
  /// Distinct requests: "https://host/path via direct".
  public var requests: [String]
  /// Distinct relays a message was sent to.
  public var messages: [String]
  /// Leaks the judge counted: "dns to 10.77.3.2:53".
  public var leaks: [String]
  /// Known findings in bitchat's own code whose trace the run carries
  /// (``BitchatSourceFindings``); optional so an older report.json still reads back.
  public var findings: [String]?
  /// The control-port commands the app sent, in order, each once (AUTHENTICATE's secret
  /// dropped): what an Onion Browser side drives tor with. Nil or empty where the app has no
  /// controller (bitchat's Arti); optional so an older report.json still reads back.
  public var commands: [String]?

  public init(
    verdict: String, runError: String? = nil, expectations: [Expectation] = [],
    notifications: [String: [Double]] = [:], milestones: [Milestone] = [],
    connections: [String] = [], requests: [String] = [], messages: [String] = [],
    leaks: [String] = [], findings: [String]? = nil
  ) {
    self.verdict = verdict
    self.runError = runError
    self.expectations = expectations
    self.notifications = notifications
    self.milestones = milestones
    self.connections = connections
    self.requests = requests
    self.messages = messages
    self.leaks = leaks
    self.findings = findings
  }

  /// bitchat's notification names (TorManager, NetworkActivationService).
  public static let notificationNames = Set(ScenarioEventCatalogue.torNotificationNames)

  /// Reduces a judged run to what the comparison looks at.
  public init(_ result: ScenarioResult) {
    let events = result.outcome.events.sorted { $0.time < $1.time }
    var notifications: [String: [Double]] = [:]
    var firsts: [String: Double] = [:]
    var connections = Set<String>()
    var requests = Set<String>()
    var messages = Set<String>()
    var ready = false
    var commands: [String] = []
    func milestone(_ label: String, _ time: Double) {
      if firsts[label] == nil { firsts[label] = time }
    }
    for event in events {
      let f = event.fields
      switch event.name {
      case let name where Self.notificationNames.contains(name):
        notifications[name, default: []].append(Self.rounded(event.time))
        milestone(name, event.time)
      case ScenarioEventKind.readyChanged.name:
        // Changes only: the bitchat-source driver also reports the initial false.
        let value = f["isReady"] == "true"
        if value != ready { milestone("isReady=\(value)", event.time) }
        ready = value
      case ScenarioEventKind.proxyMode.name:
        milestone("proxy \(f["useTor"] == "true" ? "tor" : "direct")", event.time)
      case "relay-connecting":
        let via = f["via"] ?? "?"
        connections.insert("\(f["relay"] ?? "?") via \(via)")
        milestone("relay connect via \(via)", event.time)
      case ScenarioEventKind.requestSent.name:
        let transport = f["transport"] ?? f["via"] ?? "?"
        requests.insert("\(f["url"] ?? "?") via \(transport)")
        milestone("request via \(transport)", event.time)
      case "message-sent":
        messages.insert(f["relay"] ?? "?")
        milestone("message sent", event.time)
      case "request-pending", "request-cancelled", "request-callback", "request-ignored":
        // Onion Browser: what became of an incoming URL before (or instead of) a load.
        milestone(event.name, event.time)
      case "tor-problem" where f["reason"] == "no-progress":
        milestone("tor problem no-progress", event.time)
      case "tor-command":
        let line = f["command"] ?? "?"
        let command = line.hasPrefix("AUTHENTICATE") ? "AUTHENTICATE" : line
        if !commands.contains(command) { commands.append(command) }
      default:
        continue
      }
    }
    for leak in result.judgement.leaks {
      milestone("leak \(leak.leakClass.rawValue)", leak.firstTime)
    }
    self.init(
      verdict: result.verdict.rawValue, runError: result.outcome.runError,
      expectations: result.judgement.expectations.map {
        Expectation(
          sentence: $0.expectation.sentence, status: $0.status.rawValue, reason: $0.reason)
      },
      notifications: notifications,
      milestones: firsts.map { Milestone(label: $0.key, time: Self.rounded($0.value)) }
        .sorted { ($0.time, $0.label) < ($1.time, $1.label) },
      connections: connections.sorted(), requests: requests.sorted(), messages: messages.sorted(),
      leaks: Set(
        result.judgement.leaks.map { "\($0.leakClass.rawValue) to \($0.destination)" }
      ).sorted(),
      findings: BitchatSourceFindings.all.filter {
        $0.scenario == result.scenario.name && $0.signature(result.outcome.events)
      }.map(\.title))
    self.commands = commands.isEmpty ? nil : commands
  }

  static func rounded(_ t: Double) -> Double { (t * 1000).rounded() / 1000 }
}
