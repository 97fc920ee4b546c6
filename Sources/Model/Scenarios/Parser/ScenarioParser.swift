import Audit
import TorControl
import Vocabulary

/// Turns a scenario file's text into a ``Scenario``, or an error naming the file, the field's
/// JSON path and what was expected. Accepts exactly what Scenarios/scenario.schema.json
/// accepts, plus the checks a schema cannot state (an action after the end of the run).
public enum ScenarioParser {
  /// Patterns shared with the JSON Schema (kept identical; a test checks they agree).
  public enum Pattern {
    /// The mock's plan spellings (TorControl.BootstrapPlan), in canonical form, with C tor's
    /// phase tags spelled out so editors flag a misspelt phase.
    public static let bootstrapPlan =
      "^(healthy(:[0-9]+(\\.[0-9]+)?)?|never|stall:("
      + BootstrapPhase.all.map(\.tag).joined(separator: "|")
      + ")(:(timeout|refused|none))?(:[0-9]+(\\.[0-9]+)?)?|flap:([1-9][0-9]*(\\.[0-9]+)?|0\\.[0-9]*[1-9][0-9]*)"
      + "|crash:[0-9]+(\\.[0-9]+)?)$"
    public static let destination = "^[A-Za-z0-9.-]+:[0-9]{1,5}$"
    public static let host = "^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$"
  }

  /// The names the notification expectations accept (the catalogue's Tor notifications).
  public static var notificationNames: [String] { ScenarioEventCatalogue.torNotificationNames }

  /// tor's reasons for a bootstrap problem (control-spec: REASON of a BOOTSTRAP warning, the
  /// OR connection's end reasons).
  public static let bootstrapProblemReasons = [
    "MISC", "DONE", "CONNECTREFUSED", "IDENTITY", "CONNECTRESET", "TIMEOUT", "NOROUTE",
    "IOERROR", "RESOURCELIMIT", "PT_MISSING",
  ]

  /// The largest scenario file accepted (1 MiB; the largest in Scenarios/ is under 10 KB, and
  /// a port list of all 65,535 ports is about 450 KB), so a huge file is a clear error, not a hang.
  public static let maximumFileBytes = 1 << 20

  /// `name` defaults to the file name without directory and `.json`; `verbs` are the action
  /// verbs steps may use (``ActionVerbs/all`` unless a test says), `faultKinds` the stream
  /// faults `tor.faults` may name (``StreamFaultKinds/all`` unless a test says).
  public static func parse(
    _ text: String, file: String, name: String? = nil, verbs: [ActionVerb] = ActionVerbs.all,
    faultKinds: [StreamFaultKind] = StreamFaultKinds.all
  ) throws(ScenarioError) -> Scenario {
    let root: JSONValue
    let size = text.utf8.count
    guard size <= maximumFileBytes else {
      throw ScenarioError(
        file: file, path: "",
        message: "the file is \(size) bytes; a scenario may be at most \(maximumFileBytes) bytes")
    }
    do {
      root = try JSONParser.parse(text)
    } catch {
      throw ScenarioError(file: file, path: "", message: "not valid JSON: \(error)")
    }
    let doc = try FieldReader(root, file: file, path: "")
    try doc.rejectUnknown(allowing: [
      "$schema", "lane", "title", "proves", "weakness", "gap", "sameWithoutFaults", "duration",
      "longRun", "tor", "network", "app", "expect", "ooni",
    ])
    if let schema = doc.value("$schema"), case .string = schema {
    } else if let schema = doc.value("$schema") {
      throw doc.fail("$schema", "expected a string, got \(schema.shortDescription)")
    }
    let lane =
      try doc.oneOf("lane", Lane.allCases.map(\.rawValue), required: false)
      .map { Lane(rawValue: $0)! } ?? .mock
    let title = try doc.string("title")!
    let proves = try doc.string("proves")!
    let weakness = try doc.integer("weakness", in: 1...4, "a weakness number")
    let gap = try doc.string("gap", required: false)
    let sameWithoutFaults = try doc.string("sameWithoutFaults", required: false)
    let duration = try doc.seconds("duration", required: true, positive: true)!
    if lane == .realTor, duration > realTorMaxDuration {
      throw doc.fail(
        "duration",
        "the real-Tor lane runs in real time: expected at most "
          + "\(formatSeconds(realTorMaxDuration)), got \(formatSeconds(duration))")
    }
    let longRun = try doc.bool("longRun") ?? false
    if lane == .mock, duration > mockLongRunSeconds, !longRun {
      throw doc.fail(
        "duration",
        "\(formatSeconds(duration)) is unusually long (more than \(formatSeconds(mockLongRunSeconds)) "
          + "of virtual time; at the default 25x, \(formatSeconds(duration / 25)) of real time): "
          + "durations are seconds, not milliseconds; add \"longRun\": true if you mean it")
    }
    guard let torReader = try doc.object("tor") else {
      throw doc.fail(
        nil,
        lane == .mock
          ? "missing \"tor\": expected an object (personality, bootstrap)"
          : "missing \"tor\": expected an object (client, bridges)")
    }
    let tor: TorSide =
      lane == .mock
      ? .mock(try parseTor(torReader, duration: duration, faultKinds: faultKinds))
      : .realTor(try parseRealTor(torReader))
    guard let appReader = try doc.object("app") else {
      throw doc.fail(nil, "missing \"app\": expected an object (profile, actions)")
    }
    let app = try parseApp(appReader, duration: duration, lane: lane, verbs: verbs)
    let networkReader = try doc.object("network")
    let network = try networkReader.map { r throws(ScenarioError) in
      try parseNetwork(r, lane: lane, duration: duration, hosts: knownHosts(app))
    }
    if case .mock(let plan) = tor, let network, let networkReader {
      try PlanCensorAgreement.check(plan, network, duration: duration, reader: networkReader)
    }
    if app.profile.isOnionBrowser, case .mock(let plan) = tor, plan.personality != .ctor {
      throw appReader.fail(
        "profile",
        "\(app.profile.rawValue) drives tor through its control port: on the mock lane it "
          + "needs \"personality\": \"ctor\"")
    }
    let expectations = try doc.array("expect", required: true, minCount: 1, "expectations")!
      .map { e throws(ScenarioError) in
        try parseExpectation(
          e.value, file: file, path: e.path, lane: lane, duration: duration, profile: app.profile)
      }
    var scenario = Scenario(
      name: name ?? defaultName(file), path: file, title: title, proves: proves,
      weakness: weakness, gap: gap, duration: duration, tor: tor,
      network: network ?? NetworkPlan(), app: app, expectations: expectations)
    scenario.sameWithoutFaults = sameWithoutFaults
    scenario.ooni = try parseOONIProvenance(doc, lane: lane)
    return scenario
  }

  /// Real time: a real-lane scenario longer than this would make the audit slow for CI.
  public static let realTorMaxDuration: Double = 180
  /// Virtual seconds above which a mock-lane scenario must say `"longRun": true`: the
  /// library's longest is 120 s; 20000 is a duration written in milliseconds.
  public static let mockLongRunSeconds: Double = 600

  /// What the modelled app contacts on its own: bitchat's built-in relays
  /// (NostrRelaySettings.builtInRelays) and its relay directory
  /// (GeoRelayDirectory.defaultRemoteURL); a test in ScenariosTests holds them to the app's.
  public static let builtInURLs = [
    "wss://relay.damus.io", "wss://nos.lol", "wss://relay.primal.net", "wss://offchain.pub",
    "https://raw.githubusercontent.com/permissionlesstech/bitchat/refs/heads/main/relays/online_relays_gps.csv",
  ]

  /// Host names a censor rule or a DNS poisoning may name: the names the scenario's app
  /// contacts (bitchat's built-in relays and its relay directory, and the hosts of the
  /// scenario's own relay and page URLs). The world's resolver answers every one of them with
  /// the web host, so a rule naming one acts on the web host.
  /// Empty for a program: a black box may ask for any name.
  public static func knownHosts(_ app: AppPlan) -> [String] {
    if app.profile == .program { return [] }
    var urls = builtInURLs
    urls += app.customRelays
    for action in app.actions {
      switch action.step {
      case .addRelay(let url), .openURL(let url): urls.append(url)
      default: break
      }
    }
    var hosts: [String] = []
    for url in urls {
      guard let host = hostName(inURL: url), !hosts.contains(host) else { continue }
      hosts.append(host)
    }
    return hosts
  }

  static func hostName(inURL url: String) -> String? {
    guard let scheme = url.range(of: "://") else { return nil }
    let rest = url[scheme.upperBound...]
    let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
    let host = authority.split(separator: ":").first.map(String.init)?.lowercased() ?? ""
    return host.isEmpty ? nil : host
  }

  /// Fields that belong to the other lane, named in the error so the fix is obvious.
  static func rejectOtherLane(_ r: FieldReader, _ fields: [String], lane: Lane)
    throws(ScenarioError)
  {
    for field in fields where r.value(field) != nil {
      throw r.fail(
        field,
        lane == .mock
          ? "a real-Tor lane field: not allowed in a mock-lane scenario "
            + "(add \"lane\": \"real-tor\" at the top)"
          : "a mock-lane field: not allowed in a real-tor scenario")
    }
  }

  public static func defaultName(_ file: String) -> String {
    let base = file.split(separator: "/").last.map(String.init) ?? file
    return base.hasSuffix(".json") ? String(base.dropLast(5)) : base
  }

  private static func parseRealTor(_ r: FieldReader) throws(ScenarioError) -> RealTorPlan {
    try rejectOtherLane(r, ["personality", "bootstrap", "faults", "crashAt"], lane: .realTor)
    try r.rejectUnknown(allowing: ["client", "bridges", "note"])
    let client = RealTorPlan.Client(
      rawValue: try r.oneOf("client", RealTorPlan.Client.allCases.map(\.rawValue))!)!
    var bridges: [RealTorPlan.Bridge] = []
    for e in try r.array("bridges", "bridge names") ?? [] {
      guard case .string(let s) = e.value, let bridge = RealTorPlan.Bridge(rawValue: s) else {
        let names = RealTorPlan.Bridge.allCases.map { "\"\($0.rawValue)\"" }
        throw ScenarioError(
          file: r.file, path: e.path,
          message: "expected a bridge name (one of \(names.joined(separator: ", "))), got "
            + e.value.shortDescription)
      }
      if bridges.contains(bridge) {
        throw ScenarioError(file: r.file, path: e.path, message: "\"\(s)\" is listed twice")
      }
      bridges.append(bridge)
    }
    _ = try r.string("note", required: false)
    return RealTorPlan(client: client, bridges: bridges)
  }

  private static func parseTor(
    _ r: FieldReader, duration: Double, faultKinds: [StreamFaultKind]
  ) throws(ScenarioError) -> TorPlan {
    try rejectOtherLane(r, ["client", "bridges"], lane: .mock)
    try r.rejectUnknown(allowing: [
      "personality", "bootstrap", "faults", "crashAt", "bootstrapEndOrder", "note",
    ])
    let personality = TorPlan.Personality(
      rawValue: try r.oneOf("personality", TorPlan.Personality.allCases.map(\.rawValue))!)!
    let bootstrap = try r.string(
      "bootstrap", matching: FieldPatterns.bootstrapPlan,
      "a bootstrap plan (healthy[:S], never, stall:PHASE[:timeout|refused|none][:S], "
        + "flap:S, crash:S)")!
    do {
      _ = try BootstrapPlan(parsing: bootstrap)
    } catch {
      throw r.fail("bootstrap", "\(error)")
    }
    let faults = try (r.array("faults", "faults") ?? []).map { f throws(ScenarioError) in
      try parseFault(FieldReader(f.value, file: r.file, path: f.path), kinds: faultKinds)
    }
    let crashAt = try r.seconds("crashAt")
    if let crashAt, crashAt > duration {
      throw r.fail("crashAt", afterEnd(crashAt, duration))
    }
    let order = try r.oneOf(
      "bootstrapEndOrder", TorPlan.BootstrapEndOrder.allCases.map(\.rawValue), required: false
    ).flatMap(TorPlan.BootstrapEndOrder.init(rawValue:))
    if order != nil, personality != .arti {
      throw r.fail(
        "bootstrapEndOrder", "orders Arti's overlapping bootstraps: only with personality \"arti\"")
    }
    _ = try r.string("note", required: false)
    return TorPlan(
      personality: personality, bootstrap: bootstrap, faults: faults, crashAt: crashAt,
      bootstrapEndOrder: order)
  }

  static func afterEnd(_ t: Double, _ duration: Double) -> String {
    "\(formatSeconds(t)) is after the end of the run (duration \(formatSeconds(duration)))"
  }

  /// A fault of one of `kinds`: the kind's fields are read as its entry says, and a field of
  /// another kind is an error naming whose it is (the mock would have ignored it).
  private static func parseFault(_ r: FieldReader, kinds: [StreamFaultKind]) throws(ScenarioError)
    -> StreamFault
  {
    let kind = StreamFaultKinds.kind(named: try r.oneOf("fault", kinds.map(\.name))!, in: kinds)!
    let fields = kind.parameters.map(\.field)
    for field in Set(kinds.flatMap { $0.parameters.map(\.field) }).subtracting(fields).sorted()
    where r.value(field) != nil {
      let owners = kinds.filter { $0.parameter(named: field) != nil }.map(\.name)
      throw r.fail(
        field,
        "a field of \(owners.joined(separator: ", ")) faults; a \(kind.name) fault takes "
          + (fields.isEmpty ? "none" : fields.joined(separator: ", ")))
    }
    try r.rejectUnknown(allowing: ["destination", "fault"] + fields + ["note"])
    let destination = try r.string(
      "destination", matching: FieldPatterns.destination, "a destination \"host:port\"")!
    var values: [String: Int] = [:]
    for parameter in kind.parameters {
      values[parameter.field] = try r.integer(
        parameter.field, in: parameter.ranges, parameter.meaning, required: parameter.isRequired)
    }
    _ = try r.string("note", required: false)
    return StreamFault(destination: destination, kind: kind, values: values)
  }

  private static func parseNetwork(
    _ r: FieldReader, lane: Lane, duration: Double, hosts: [String]
  ) throws(ScenarioError) -> NetworkPlan {
    try r.rejectUnknown(allowing: ["censor", "dnsPoisoning", "note"])
    let rules = try (r.array("censor", "censor rules") ?? []).map { e throws(ScenarioError) in
      try parseCensorRule(
        FieldReader(e.value, file: r.file, path: e.path), lane: lane, duration: duration,
        hosts: hosts)
    }
    let poisoning = try (r.array("dnsPoisoning", "DNS poisoning rules") ?? []).map {
      e throws(ScenarioError) in
      let p = try FieldReader(e.value, file: r.file, path: e.path)
      try p.rejectUnknown(allowing: ["name", "answer", "note"])
      let name = try p.string("name", matching: FieldPatterns.host, "a lower-case host name")!
      if lane == .mock, !hosts.isEmpty,
        !hosts.contains(where: { $0 == name || $0.hasSuffix("." + name) })
      {
        throw p.fail(
          "name",
          "\"\(name)\" is not a name the app asks for, so poisoning it changes nothing"
            + NameSuggestion.hint(for: name, in: hosts) + " (names it asks for: "
            + hosts.joined(separator: ", ") + ")")
      }
      let answer =
        try p.oneOf("answer", DNSPoisoning.Answer.allCases.map(\.rawValue), required: false)
        .map { DNSPoisoning.Answer(rawValue: $0)! } ?? .sinkhole
      _ = try p.string("note", required: false)
      return DNSPoisoning(name: name, answer: answer)
    }
    _ = try r.string("note", required: false)
    return NetworkPlan(censor: rules, dnsPoisoning: poisoning)
  }

  private static func parseCensorRule(
    _ r: FieldReader, lane: Lane, duration: Double, hosts: [String]
  ) throws(ScenarioError) -> CensorPlanRule {
    try r.rejectUnknown(allowing: [
      "action", "to", "port", "protocol", "longerThan", "from", "until", "note", "measured",
    ])
    let action = CensorAction(
      rawValue: try r.oneOf("action", CensorAction.scenarioRules.map(\.rawValue))!)!
    let written = try r.string(
      "to", matching: FieldPatterns.host,
      lane == .mock
        ? "a target: tor-guards, dns-resolver, world, any, or a host name the world serves"
        : "a target: tor-relays, tor-bridge, one node (testnet-auth1-orport ...), dns-resolver, "
          + "world, any, or a host name the world serves")!
    let target = CensorTarget(written)
    if lane == .mock, !target.exists(on: .mock) {
      throw r.fail(
        "to",
        "\"\(target)\" is a real-Tor lane target: not allowed in a mock-lane scenario "
          + "(the mock's guard is \"tor-guards\")")
    }
    if lane == .realTor, !target.exists(on: .realTor) {
      throw r.fail(
        "to",
        "\"\(target)\" is the mock's guard: on the real-Tor lane use \"tor-relays\" or "
          + "\"tor-bridge\"")
    }
    let known = CensorTarget.names(on: lane)
    if case .host(let name) = target, !hosts.contains(name) {
      let what =
        name.allSatisfy({ $0.isNumber || $0 == "." })
        ? "an address: targets are names, not addresses" : "not a target of this sandbox"
      throw r.fail(
        "to",
        "\"\(name)\" is \(what)"
          + NameSuggestion.hint(for: name, in: known + hosts)
          + " (targets: " + known.joined(separator: ", ")
          + "; host names the app asks for: " + hosts.joined(separator: ", ") + ")")
    }
    let transport = try r.oneOf(
      "protocol", CensorPlanRule.TransportProtocol.allCases.map(\.rawValue), required: false
    ).map { CensorPlanRule.TransportProtocol(rawValue: $0)! }
    let port = try r.integer("port", in: 1...65535, "a port")
    if port != nil, transport == .icmp { throw r.fail("port", "ICMP has no ports") }
    if action == .reset, let transport, transport != .tcp {
      throw r.fail("protocol", "a reset needs \"tcp\", got \"\(transport.rawValue)\"")
    }
    let longerThan = try r.integer("longerThan", in: 0...65535, "a packet length in bytes")
    let from = try r.seconds("from")
    let until = try r.seconds("until")
    if let from, from >= duration {
      throw r.fail("from", afterEnd(from, duration) + ": the rule would never be in force")
    }
    if let until, until > duration { throw r.fail("until", afterEnd(until, duration)) }
    if let from, let until, until <= from {
      throw r.fail("until", "expected a time after \"from\" (\(formatSeconds(from)))")
    }
    _ = try r.string("note", required: false)
    var rule = CensorPlanRule(
      action: action, target: target, port: port, transport: transport, longerThan: longerThan,
      from: from, until: until)
    rule.measured = try r.string("measured", required: false)
    if action.isTCPOnly, action != .reset, let transport, transport != .tcp {
      throw r.fail(
        "protocol", "\"\(action.rawValue)\" needs \"tcp\", got \"\(transport.rawValue)\"")
    }
    return rule
  }

  private static func parseApp(
    _ r: FieldReader, duration: Double, lane: Lane, verbs: [ActionVerb]
  )
    throws(ScenarioError) -> AppPlan
  {
    try r.rejectUnknown(allowing: [
      "profile", "torPreference", "activation", "customRelays", "actions", "note", "program",
    ])
    let profile = AppPlan.Profile(
      rawValue: try r.oneOf("profile", AppPlan.Profile.allCases.map(\.rawValue))!)!
    var program: ProgramSpec?
    if let programReader = try r.object("program") {
      guard profile == .program else {
        throw r.fail("program", "a command is given only with \"profile\": \"program\"")
      }
      program = try ProgramSpecParser.read(programReader)
    }
    let preference = try r.bool("torPreference") ?? true
    let activation =
      try r.oneOf("activation", ["granted", "revoked"], required: false) ?? "granted"
    let relays = try (r.array("customRelays", "relay URLs") ?? []).map {
      e throws(ScenarioError) in
      guard case .string(let s) = e.value, !s.isEmpty else {
        throw ScenarioError(
          file: r.file, path: e.path,
          message: "expected a relay URL string, got \(e.value.shortDescription)")
      }
      return s
    }
    // A program's one action is its start, at time 0 unless the file says.
    let written =
      try r.array("actions", required: profile != .program, minCount: 1, "actions") ?? [
        (r.childPath("actions") + "[0]", .object([("at", .number(0)), ("do", .string("start"))]))
      ]
    let actions = try written.map {
      e throws(ScenarioError) in
      let reader = try FieldReader(e.value, file: r.file, path: e.path)
      let action = try parseAction(reader, duration: duration, lane: lane, verbs: verbs)
      guard profile.models(action.step, verbs: verbs) else {
        throw reader.fail(
          "do",
          profile.isOnionBrowser
            ? "\"\(action.step.name)\" is not modelled for the \(profile.rawValue) profile "
              + "(its verbs: " + profile.modelledVerbs(in: verbs).joined(separator: ", ") + ")"
            : profile == .program
              ? "a program is a black box: only \"start\" (and the mock Tor's verbs) apply"
              : "\"\(action.step.name)\" needs an onion-browser profile")
      }
      return action
    }
    _ = try r.string("note", required: false)
    return AppPlan(
      profile: profile, torPreference: preference, activationGranted: activation == "granted",
      customRelays: relays,
      // Stable: actions at the same time keep their written order.
      actions: actions.enumerated().sorted {
        ($0.element.at, $0.offset) < ($1.element.at, $1.offset)
      }
      .map(\.element), program: program)
  }

  /// One step, read by its verb's entry in `verbs`: the field it carries and the values it
  /// takes come from there, so a verb is read here by being listed.
  private static func parseAction(
    _ r: FieldReader, duration: Double, lane: Lane, verbs: [ActionVerb]
  ) throws(ScenarioError) -> AppAction {
    if r.value("do") == nil, r.value("action") != nil {
      throw r.fail(
        "action",
        "scenario files spell it \"do\" (\"action\" is the app driver's name, docs/app-driver.md)")
    }
    let name = try r.oneOf("do", ActionVerbs.scenarioNames(in: verbs))!
    let verb = ActionVerbs.verb(named: name, in: verbs)!
    if lane == .realTor, verb.performer == .mockTor {
      throw r.fail(
        "do", "\"\(name)\" kills the mock: a mock-lane action, not allowed in a real-tor scenario"
      )
    }
    let field = verb.scenarioArgument?.field
    try r.rejectUnknown(
      allowing: ["at", "do", "note"] + (field.map { [$0] } ?? []),
      otherSpellings: ["value": "enabled", "action": "do"])
    let at = try r.seconds("at", required: true)!
    if at > duration { throw r.fail("at", afterEnd(at, duration)) }
    _ = try r.string("note", required: false)
    var argument: ActionValue?
    if let spec = verb.scenarioArgument {
      switch spec.values {
      case .bool: argument = try r.bool(spec.field, required: true).map(ActionValue.bool)
      case .text(let fallback):
        argument = .text(try r.string(spec.field, required: fallback == nil) ?? fallback!)
      case .choice(let words, let fallback):
        argument = .text(try r.oneOf(spec.field, words, required: fallback == nil) ?? fallback!)
      case .seconds: argument = try r.seconds(spec.field, required: true).map(ActionValue.seconds)
      }
    }
    return AppAction(at: at, step: ActionStep(verb: name, scenarioArgument: argument))
  }

  static func parseExpectation(
    _ value: JSONValue, file: String, path: String, lane: Lane = .mock,
    duration: Double = .infinity, profile: AppPlan.Profile? = nil
  ) throws(ScenarioError) -> ScenarioExpectation {
    let r = try FieldReader(value, file: file, path: path)
    let kind = try r.oneOf("kind", ScenarioExpectation.kinds)!
    // The list the names came from: every name in it has its unit.
    let unit = ExpectationKinds.unit(named: kind)!
    if lane == .mock, unit.realTorOnly {
      throw r.fail(
        "kind",
        "\"\(kind)\" is judged from Debian's tor: a real-Tor lane expectation, not allowed in "
          + "a mock-lane scenario (add \"lane\": \"real-tor\" at the top)")
    }
    try r.rejectUnknown(allowing: ["kind", "because"] + unit.fields)
    _ = try r.string("because", required: false)
    return ScenarioExpectation(
      try unit.parse(ExpectationInput(reader: r, duration: duration, profile: profile)))
  }
}
