import Audit

/// sarif.json: SARIF 2.1.0 for code-scanning uploads. One result per leak, with one rule per
/// leak class. Exposure (the user's choice) and the expected leaks of canaries are not results.
public enum SARIFReport {
  public static let schemaURI =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

  public static func ruleID(_ c: LeakClass) -> String { "failclosed/leak/\(c.rawValue)" }

  static let ruleText: [LeakClass: (name: String, text: String)] = [
    .dns: ("DNSLeak", "A DNS question left the device outside Tor."),
    .tcp: ("TCPLeak", "A TCP connection went to a destination that is not a Tor relay."),
    .udp: ("UDPLeak", "A UDP datagram left the device outside Tor (Tor carries no UDP)."),
    .icmp: ("ICMPLeak", "An ICMP packet left the device outside Tor."),
    .ipv6: ("IPv6Leak", "IPv6 traffic left the device around Tor."),
    .multicast: ("MulticastLeak", "The app sent multicast traffic onto the link."),
    .otherProtocol: ("OtherProtocolLeak", "A packet of another IP protocol left the device."),
  ]

  public static func render(_ report: RunReport) -> String {
    make(report).serialized(indent: 2) + "\n"
  }

  public static func make(_ report: RunReport) -> JSONValue {
    let rules: [JSONValue] = LeakClass.allCases.map { c in
      let info = ruleText[c]!
      return .object([
        ("id", .string(ruleID(c))),
        ("name", .string(info.name)),
        ("shortDescription", .object([("text", .string(info.text))])),
        (
          "fullDescription",
          .object([
            (
              "text",
              .string(
                info.text
                  + " failclosed saw it in the packet capture while the app was meant to use Tor."
              )
            )
          ])
        ),
        ("defaultConfiguration", .object([("level", .string("error"))])),
        ("properties", .object([("tags", .array([.string("security"), .string("tor")]))])),
      ])
    }
    var results: [JSONValue] = []
    for r in report.results where !r.scenario.isCanary {
      for leak in r.judgement.leaks {
        results.append(result(leak, r))
      }
    }
    return .object([
      ("$schema", .string(schemaURI)),
      ("version", .string("2.1.0")),
      (
        "runs",
        .array([
          .object([
            (
              "tool",
              .object([
                (
                  "driver",
                  .object([
                    ("name", .string("failclosed")),
                    ("version", .string(report.versions["failclosed"] ?? "0")),
                    ("rules", .array(rules)),
                  ])
                )
              ])
            ),
            (
              "invocations",
              .array([
                .object([
                  ("executionSuccessful", .bool(report.verdict != .inconclusive)),
                  ("startTimeUtc", .string(report.startedAt)),
                ])
              ])
            ),
            ("results", .array(results)),
          ])
        ])
      ),
    ])
  }

  static func result(_ leak: ScenarioLeak, _ r: ScenarioResult) -> JSONValue {
    let names = leak.names.isEmpty ? "" : " for \(leak.names.joined(separator: ", "))"
    let text =
      "Scenario \(r.scenario.name): \(leak.leakClass.rawValue) leak to \(leak.destination)"
      + "\(names), first at \(formatSeconds(leak.firstTime)), \(leak.packets) packet(s). "
      + "Proves: \(r.scenario.proves)"
    return .object([
      ("ruleId", .string(ruleID(leak.leakClass))),
      ("ruleIndex", .number(Double(LeakClass.allCases.firstIndex(of: leak.leakClass)!))),
      ("level", .string("error")),
      ("message", .object([("text", .string(text))])),
      (
        "locations",
        .array([
          .object([
            (
              "physicalLocation",
              .object([
                ("artifactLocation", .object([("uri", .string(r.scenario.path))])),
                ("region", .object([("startLine", .number(1))])),
              ])
            )
          ])
        ])
      ),
      (
        "partialFingerprints",
        .object([
          (
            "failclosedLeak/v1",
            .string("\(r.scenario.name)|\(leak.leakClass.rawValue)|\(leak.destination)")
          )
        ])
      ),
      (
        "properties",
        .object([
          ("scenario", .string(r.scenario.name)),
          ("destination", .string(leak.destination)),
          ("transport", .string(leak.transport)),
          ("names", .array(leak.names.map { .string($0) })),
          ("firstTime", .number(leak.firstTime)),
          ("packets", .number(Double(leak.packets))),
          ("bytes", .number(Double(leak.bytes))),
        ])
      ),
    ])
  }
}
