import Scenarios

/// Why a measurement was not converted: not censorship (OONI's own rules), or a measurement the
/// sandbox cannot reproduce. `convert` exits 2 with this.
public enum OONIConversionError: Error, Equatable, CustomStringConvertible, Sendable {
  case notCensorship([String])
  case unsupported(String)

  public var description: String {
    switch self {
    case .notCensorship(let reasons):
      return "not censorship, not converted (--force converts anyway): "
        + reasons.joined(separator: "; ")
    case .unsupported(let reason): return "cannot be replayed: \(reason)"
    }
  }
}

/// One OONI measurement turned into a real-tor scenario file (a JSON document a reviewer can
/// read, each censor rule saying where it came from). Pure.
public enum OONIConversion {
  public struct Options: Sendable {
    /// The app under test; nil: bitchat, or hardened for torsf (it passes bridges to tor).
    public var profile: AppPlan.Profile?
    /// Convert measurements that are not censorship, with the reasons in the file.
    public var force: Bool

    public init(profile: AppPlan.Profile? = nil, force: Bool = false) {
      self.profile = profile
      self.force = force
    }
  }

  /// "ooni-ru-tor-2023-01-21-as197467".
  public static func scenarioName(_ m: OONIMeasurement) -> String {
    "ooni-\(m.probeCC)-\(m.testName.replacingOccurrences(of: "_", with: "-"))-\(m.date)-\(m.probeASN)"
      .lowercased()
  }

  /// The scenario document, or why not.
  public static func convert(_ m: OONIMeasurement, options: Options = Options())
    throws(OONIConversionError) -> JSONValue
  {
    guard case .other = m.keys else {
      let reasons = NotCensorship.reasons(m)
      if !reasons.isEmpty, !options.force { throw .notCensorship(reasons) }
      return try document(m, options: options, notCensorship: reasons)
    }
    throw .unsupported(
      "\(m.testName) is not a Tor test (tor, vanilla_tor, torsf): nothing to replay")
  }

  /// The document's text, two-space indented, as `convert -o` writes it.
  public static func text(_ document: JSONValue) -> String {
    document.serialized(indent: 2) + "\n"
  }

  static func describe(_ m: OONIMeasurement) -> String {
    var text = "\(m.testName) \(m.testVersion), \(m.probeCC) \(m.startTime) UTC \(m.probeASN)"
    if let network = m.probeNetworkName, !network.isEmpty { text += " (\(network))" }
    if let software = m.softwareName {
      text += ", \(software) \(m.softwareVersion ?? "")".trimmingSuffixSpace()
    }
    if let report = m.reportID, !report.isEmpty { text += ", report \(report)" }
    return text
  }

  private static func document(
    _ m: OONIMeasurement, options: Options, notCensorship: [String]
  ) throws(OONIConversionError) -> JSONValue {
    let body: Body
    switch m.keys {
    case .tor(let keys): body = try torBody(m, keys, options: options)
    case .bootstrap(let keys): body = try bootstrapBody(m, keys, options: options)
    case .other: throw .unsupported("\(m.testName) is not a Tor test")
    }
    var ooni: [(key: String, value: JSONValue)] = [
      ("source", .string(fileName(m.file))), ("measurement", .string(describe(m))),
    ]
    if !notCensorship.isEmpty {
      ooni.append(("notCensorship", .array(notCensorship.map { .string("forced: " + $0) })))
    }
    ooni.append(("notes", .array(body.notes.map(JSONValue.string))))
    var tor: [(key: String, value: JSONValue)] = [("client", .string("debian-tor"))]
    if !body.bridges.isEmpty { tor.append(("bridges", .array(body.bridges.map(JSONValue.string)))) }
    let profile = body.profile
    var members: [(key: String, value: JSONValue)] = [
      ("$schema", .string("../scenario.schema.json")), ("lane", .string("real-tor")),
      ("title", .string(body.title)), ("proves", .string(body.proves)), ("ooni", .object(ooni)),
      ("duration", .number(body.duration)), ("tor", .object(tor)),
    ]
    if !body.rules.isEmpty {
      members.append(("network", .object([("censor", .array(body.rules.map(JSONValue.object)))])))
    }
    members.append(
      ("app", .object([("profile", .string(profile.rawValue)), ("actions", actions(profile))])))
    var expect: [JSONValue] = [.object([("kind", .string("no-leak"))])]
    expect += body.expectations.map(JSONValue.object)
    if profile != .onionBrowser {
      expect.append(
        .object([
          ("kind", .string("requests-queued-before-ready")),
          (
            "because",
            .string("fail closed under the measured censorship: the message waits for Tor")
          ),
        ]))
    }
    members.append(("expect", .array(expect)))
    return .object(members)
  }

  static func fileName(_ path: String) -> String {
    path.split(separator: "/").last.map(String.init) ?? path
  }

  private static func actions(_ profile: AppPlan.Profile) -> JSONValue {
    if profile == .onionBrowser {
      return .array([
        .object([("at", .number(0)), ("do", .string("start"))]),
        .object([
          ("at", .number(0.2)), ("do", .string("open-url")),
          ("url", .string("onionbrowser://10.66.1.80/start")),
          ("note", .string("held until Tor is ready, then loaded through it")),
        ]),
      ])
    }
    return .array([
      .object([("at", .number(0)), ("do", .string("start"))]),
      .object([
        ("at", .number(1)), ("do", .string("send-message")),
        ("note", .string("asked for before tor is ready: must wait in the queue")),
      ]),
    ])
  }

  struct Body {
    var title: String
    var proves: String
    var duration: Double
    var profile: AppPlan.Profile
    var bridges: [String] = []
    var rules: [[(key: String, value: JSONValue)]] = []
    var expectations: [[(key: String, value: JSONValue)]] = []
    var notes: [String] = []
  }

  // MARK: tor: reachability class by class

  private static func torBody(_ m: OONIMeasurement, _ keys: TorTestKeys, options: Options)
    throws(OONIConversionError) -> Body
  {
    let profile = options.profile ?? .bitchat
    var body = Body(
      title: "", proves: "", duration: 20, profile: profile)
    let dirPortHosts = Set(
      keys.targets.filter { $0.protocolName == "dir_port" }.map {
        TargetClassMapping.host($0.address)
      })
    var byClass: [RealTorTargetClass: [TorTarget]] = [:]
    for target in keys.targets {
      if target.notRun {
        body.notes.append("\(target.address) (\(target.protocolName)) was not run: left out")
        continue
      }
      guard let cls = TargetClassMapping.sandboxClass(target, dirPortHosts: dirPortHosts) else {
        body.notes.append(
          "\(target.address): protocol \(target.protocolName) has no class in the private "
            + "network: left out")
        continue
      }
      if let failure = target.failure {
        let kind = OONIFailure(failure)
        if target.isIPv6, [.hostUnreachable, .networkUnreachable].contains(kind) {
          body.notes.append(
            "\(target.address) (\(target.protocolName), IPv6) failed with \(kind): a probe "
              + "without IPv6, local, not censorship (ooni-format 1.5): left out")
          continue
        }
        if kind == .ntorAuthMismatch {
          body.notes.append(
            "\(target.address) (\(target.protocolName)): ntor AUTH mismatch, a client bug: left out"
          )
          continue
        }
      }
      if target.protocolName == "or_port", cls == .dirauthORPorts {
        if !body.notes.contains(where: { $0.hasPrefix("or_port targets on directory") }) {
          body.notes.append(
            "or_port targets on directory authorities' addresses (they have dir_port targets "
              + "too) are counted as directory authorities' ORPorts, as OONI did from 2020-01-27")
        }
      }
      byClass[cls, default: []].append(target)
    }
    var summary: [String] = []
    for cls in RealTorTargetClass.allCases {
      guard let targets = byClass[cls], !targets.isEmpty else {
        body.notes.append(
          "\(cls.rawValue) (\(cls.nodes.count) node\(cls.nodes.count == 1 ? "" : "s")): not "
            + "measured by this test: left reachable")
        continue
      }
      let protocols = Array(Set(targets.map(\.protocolName))).sorted().joined(separator: "+")
      let reachable = targets.filter { $0.failure == nil }.count
      let mapped = TargetClassMapping.reachableNodes(
        reachable: reachable, total: targets.count, nodes: cls.nodes.count)
      body.notes.append(
        "\(cls.rawValue): measured \(reachable)/\(targets.count) \(protocols) reachable; "
          + "\(mapped.how): \(mapped.count) of \(cls.nodes.count) reachable in the sandbox")
      if cls == .bridgeObfs4 {
        body.notes.append(
          "obfs4 bridges are the private network's one obfs4 bridge (snowflake would be too)")
      }
      summary.append("\(reachable)/\(targets.count) \(protocols)")
      let failing = targets.filter { $0.failure != nil }
      var tally: [(action: FailureCensorAction, failure: String, count: Int)] = []
      for target in failing {
        guard let action = FailureCensorAction.action(for: target) else {
          throw .unsupported(
            "\(target.address) (\(target.protocolName)) failed with \"\(target.failure!)\": no "
              + "censor action stands for it")
        }
        let name = FailureCensorAction.failureName(target)!
        if let i = tally.firstIndex(where: { $0.action == action && $0.failure == name }) {
          tally[i].count += 1
        } else {
          tally.append((action, name, 1))
        }
      }
      tally.sort { $0.count > $1.count }
      var expectation: [(key: String, value: JSONValue)] = [
        ("kind", .string("reachability")), ("targets", .string(cls.rawValue)),
        ("reachable", .number(Double(mapped.count))),
      ]
      if let main = tally.first, mapped.count < cls.nodes.count {
        if tally.count > 1 {
          body.notes.append(
            "\(cls.rawValue): mixed failures ("
              + tally.map { "\($0.count) \($0.failure)" }.joined(separator: ", ")
              + "); the blocked nodes take the most frequent")
        }
        for node in cls.nodes[mapped.count...] {
          body.rules.append(
            main.action.rule(target: node) + [
              (
                "measured",
                .string(
                  "\(m.label), \(main.count)/\(targets.count) \(protocols) \(main.failure)")
              )
            ])
        }
        expectation.append(("failure", .string(main.action.probedFailure)))
      }
      expectation.append(
        ("measured", .string("\(m.label), \(reachable)/\(targets.count) \(protocols) reachable")))
      body.expectations.append(expectation)
    }
    let blocked = keys.targets.filter { $0.failure != nil }.count
    body.title =
      "OONI tor, \(m.label): \(blocked) of \(keys.targets.count) Tor targets failed, replayed "
      + "class by class"
    body.proves =
      "The private network's directory authorities, relays and bridge are reachable from the "
      + "device in the proportions OONI's tor test measured (\(summary.joined(separator: ", "))), "
      + "each blocked node failing as the measured targets did; under that censorship the "
      + "\(profile.rawValue) app fails closed."
    return body
  }

  // MARK: vanilla_tor, torsf: the bootstrap stop

  private static func bootstrapBody(
    _ m: OONIMeasurement, _ keys: BootstrapTestKeys, options: Options
  ) throws(OONIConversionError) -> Body {
    let snowflake = keys.transport == "snowflake"
    let profile = options.profile ?? (snowflake ? .hardened : .bitchat)
    var body = Body(title: "", proves: "", duration: 15, profile: profile)
    guard let stop = keys.stop else {
      guard options.force else {
        throw .unsupported("the measurement records no bootstrap stop (no progress, no log)")
      }
      body.title = "OONI \(m.testName), \(m.label): no bootstrap stop recorded (forced)"
      body.proves =
        "Nothing to reproduce: the measurement recorded no bootstrap stop; the app runs on the "
        + "unblocked private network and must not leak."
      body.notes.append("no bootstrap stop recorded: nothing blocked, no stop expected")
      return body
    }
    let version = keys.torVersion.map { ", tor \($0)" } ?? ""
    let measured =
      "\(m.label), \(m.testName) stopped at \(stop)"
      + (keys.torVersion.map { " (tor \($0))" } ?? "")
    let plan = try BootstrapStopCensorship.plan(
      stop: stop, transport: keys.transport, measured: measured)
    body.rules = plan.rules
    body.bridges = plan.bridges
    body.notes = plan.notes
    if stop.tag != plan.phase {
      body.notes.append(
        "\(stop)" + (keys.torVersion.map { " of tor \($0)" } ?? "")
          + " is today's \(plan.progress)% (\(plan.phase))")
    }
    if stop.source == .inferred {
      body.notes.append(
        "\(m.testName) \(m.testVersion) keeps no progress: a bootstrap time "
          + "(\(Int(keys.bootstrapTime ?? 0)) s) and no failure read as 100% (done)")
    }
    let done = plan.phase == "done"
    body.duration = done ? (snowflake ? 30 : 20) : 15
    body.expectations.append([
      ("kind", .string("bootstrap-stops-at")), ("progress", .number(Double(plan.progress))),
      ("tag", .string(plan.phase)), ("measured", .string("\(stop)\(version)")),
    ])
    if done {
      body.expectations.append([("kind", .string("bootstrap-reaches")), ("progress", .number(100))])
      if snowflake { body.expectations.append([("kind", .string("bootstrap-through-bridge"))]) }
    } else if profile != .onionBrowser {
      body.expectations.append([
        ("kind", .string("no-notification")), ("name", .string("TorDidBecomeReady")),
      ])
    }
    let how = snowflake ? "over snowflake (here: the obfs4 bridge)" : "directly"
    body.title =
      "OONI \(m.testName), \(m.label): tor \(how) "
      + (done ? "bootstrapped (\(stop))" : "stuck at \(stop)")
    body.proves =
      "Debian's tor in the sandbox stops where the measured tor stopped "
      + "(\(plan.progress)% \(plan.phase)), under the censorship that makes it stop there; the "
      + "\(profile.rawValue) app fails closed."
    return body
  }
}

extension String {
  fileprivate func trimmingSuffixSpace() -> String {
    var s = self
    while s.hasSuffix(" ") { s.removeLast() }
    return s
  }
}
