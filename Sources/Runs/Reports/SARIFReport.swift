import Audit
import Scenarios

/// sarif.json: SARIF 2.1.0 for code-scanning uploads. One result per leak, with one rule per
/// leak class. The expected leaks of canaries and exposure (the user's choice) are results too,
/// but suppressed with the reason, so a reviewer sees the evidence and no alert is raised. A
/// canary that caught nothing is an error of its own rule: the detector did not fire, so no
/// pass of that run can be trusted.
public enum SARIFReport {
  public static let schemaURI =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

  public static func ruleID(_ c: LeakClass) -> String { "failclosed/leak/\(c.rawValue)" }

  public static let canaryMissedRuleID = "failclosed/canary-missed"

  /// Exhaustive over the classes, so a new class cannot ship without its rule.
  static func ruleText(_ c: LeakClass) -> (name: String, text: String) {
    switch c {
    case .dns: return ("DNSLeak", "A DNS question left the device outside Tor.")
    case .clearOnTorEndpoint:
      return (
        "ClearOnTorEndpoint",
        "Bytes went to a Tor relay, DirPort or bridge in clear: not the protocol that endpoint "
          + "speaks, so a censor on the path reads them."
      )
    case .tcp: return ("TCPLeak", "A TCP connection went to a destination that is not a Tor relay.")
    case .udp:
      return ("UDPLeak", "A UDP datagram left the device outside Tor (Tor carries no UDP).")
    case .icmp: return ("ICMPLeak", "An ICMP packet left the device outside Tor.")
    case .ipv6: return ("IPv6Leak", "IPv6 traffic left the device around Tor.")
    case .multicast: return ("MulticastLeak", "The app sent multicast traffic onto the link.")
    case .otherProtocol:
      return ("OtherProtocolLeak", "A packet of another IP protocol left the device.")
    }
  }

  public static func render(_ report: RunReport) -> String {
    make(report).serialized(indent: 2) + "\n"
  }

  public static func make(_ report: RunReport) -> JSONValue {
    var rules: [JSONValue] = LeakClass.allCases.map { c in
      let info = ruleText(c)
      return rule(id: ruleID(c), name: info.name, text: info.text)
    }
    rules.append(
      rule(
        id: canaryMissedRuleID, name: "CanaryMissed",
        text: "A canary client that really leaks was not caught: the leak detector did not fire."))
    var results: [JSONValue] = []
    for r in report.results {
      let suppression: String? =
        r.scenario.isCanary
        ? "canary: this scenario's client leaks on purpose, to prove the detector fires" : nil
      for leak in r.judgement.leaks {
        results.append(result(leak, r, suppressedBecause: suppression))
      }
      for leak in r.judgement.exposure {
        results.append(
          result(
            leak, r,
            suppressedBecause: "exposure: the user had turned Tor off, so this is the user's choice"
          ))
      }
      for missed in r.judgement.expectations where missed.status == .failed {
        if missed.expectation.as(ScenarioExpectation.LeakCaught.self) != nil {
          results.append(canaryMissed(missed, r))
        } else if report.baseline != nil {
          // Against a baseline every finding is a result with its state.
          results.append(expectationFailed(missed, r))
        }
      }
    }
    if let baseline = report.baseline {
      rules.append(
        rule(
          id: expectationFailedRuleID, name: "ExpectationFailed",
          text:
            "The app did not do what the scenario expects of a Tor integration that fails closed."
        ))
      results = results.map { withBaselineState($0, baseline) }
      for (fingerprint, text) in baseline.absent.sorted(by: { $0.key < $1.key }) {
        results.append(
          .object([
            ("ruleId", .string(expectationFailedRuleID)),
            ("level", .string("note")),
            ("message", .object([("text", .string(text))])),
            ("partialFingerprints", .object([(findingKey, .string(fingerprint))])),
            ("baselineState", .string("absent")),
          ]))
      }
    }
    return document(report, rules: rules, results: results)
  }

  static let expectationFailedRuleID = "failclosed/expectation-failed"
  static let findingKey = "failclosedFinding/v1"

  /// The finding's fingerprint (as FindingBaseline keeps it) and its state, on a result.
  static func withBaselineState(_ result: JSONValue, _ baseline: RunBaseline) -> JSONValue {
    // A suppressed result (a canary's leak, exposure by the user's choice) is no finding.
    guard case .object(var members) = result, result["suppressions"] == nil,
      case .string(let finding)? = result["properties"]?["finding"]
    else { return result }
    let fingerprint = baseline.system + "|" + finding
    members.append(
      ("baselineState", .string(baseline.states[fingerprint] ?? BaselineState.new.rawValue)))
    if let index = members.firstIndex(where: { $0.key == "partialFingerprints" }),
      case .object(var prints) = members[index].value
    {
      prints.append((findingKey, .string(fingerprint)))
      members[index].value = .object(prints)
    }
    return .object(members)
  }

  static func expectationFailed(_ failed: ExpectationResult, _ r: ScenarioResult) -> JSONValue {
    .object([
      ("ruleId", .string(expectationFailedRuleID)),
      ("level", .string("error")),
      (
        "message",
        .object([
          (
            "text",
            .string(
              "Scenario \(r.scenario.name): \(failed.expectation.sentence): \(failed.reason)")
          )
        ])
      ),
      ("locations", location(r)),
      ("partialFingerprints", .object([])),
      (
        "properties",
        .object([
          ("scenario", .string(r.scenario.name)),
          (
            "finding",
            .string(Finding.expectationKey(r.scenario, failed.expectation))
          ),
        ])
      ),
    ])
  }

  static func rule(id: String, name: String, text: String) -> JSONValue {
    .object([
      ("id", .string(id)),
      ("name", .string(name)),
      ("shortDescription", .object([("text", .string(text))])),
      (
        "fullDescription",
        .object([
          (
            "text",
            .string(
              text
                + " failclosed saw it in the packet capture while the app was meant to use Tor."
            )
          )
        ])
      ),
      ("defaultConfiguration", .object([("level", .string("error"))])),
      ("properties", .object([("tags", .array([.string("security"), .string("tor")]))])),
    ])
  }

  static func document(_ report: RunReport, rules: [JSONValue], results: [JSONValue]) -> JSONValue {
    .object([
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

  static func location(_ r: ScenarioResult) -> JSONValue {
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
  }

  static func canaryMissed(_ missed: ExpectationResult, _ r: ScenarioResult) -> JSONValue {
    .object([
      ("ruleId", .string(canaryMissedRuleID)),
      ("ruleIndex", .number(Double(LeakClass.allCases.count))),
      ("level", .string("error")),
      (
        "message",
        .object([("text", .string("Scenario \(r.scenario.name): \(missed.reason)"))])
      ),
      ("locations", location(r)),
      ("partialFingerprints", .object([("failclosedCanary/v1", .string(r.scenario.name))])),
      (
        "properties",
        .object([
          ("scenario", .string(r.scenario.name)),
          ("finding", .string(Finding.expectationKey(r.scenario, missed.expectation))),
        ])
      ),
    ])
  }

  static func result(_ leak: ScenarioLeak, _ r: ScenarioResult, suppressedBecause: String?)
    -> JSONValue
  {
    let names = leak.names.isEmpty ? "" : " for \(leak.names.joined(separator: ", "))"
    let text =
      "Scenario \(r.scenario.name): \(leak.leakClass.rawValue) leak to \(leak.destination)"
      + "\(names), first at \(formatSeconds(leak.firstTime)), \(leak.packets) packet(s)"
      + (leak.reason.map { $0 == "destination-not-allowed" ? "" : " (\($0))" } ?? "")
      + (leak.evidence.map { ": \($0)" } ?? "") + ". Proves: \(r.scenario.proves)"
    var members: [(key: String, value: JSONValue)] = [
      ("ruleId", .string(ruleID(leak.leakClass))),
      ("ruleIndex", .number(Double(LeakClass.allCases.firstIndex(of: leak.leakClass)!))),
      ("level", .string("error")),
      ("message", .object([("text", .string(text))])),
      ("locations", location(r)),
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
          (
            "finding",
            .string(Finding.leakKey(r.scenario, leak))
          ),
          ("destination", .string(leak.destination)),
          ("transport", .string(leak.transport)),
          ("names", .array(leak.names.map { .string($0) })),
          ("firstTime", .number(leak.firstTime)),
          ("packets", .number(Double(leak.packets))),
          ("bytes", .number(Double(leak.bytes))),
          ("reason", .string(leak.reason ?? "")),
          ("direction", .string(leak.direction ?? "")),
          ("evidence", .string(leak.evidence ?? "")),
        ])
      ),
    ]
    if let suppressedBecause {
      members.append(
        (
          "suppressions",
          .array([
            .object([("kind", .string("external")), ("justification", .string(suppressedBecause))])
          ])
        ))
    }
    return .object(members)
  }
}
