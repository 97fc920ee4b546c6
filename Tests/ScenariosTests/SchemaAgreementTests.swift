import FailClosedSupport
import Foundation
import TestSupport
import Testing
import Vocabulary

@testable import Scenarios

/// The JSON Schema editors use and the Swift parser must accept and reject the same files.
/// Checked with a real validator (python3-jsonschema under /usr/bin/python3).
@Suite struct SchemaAgreementTests {
  static let python = "/usr/bin/python3"
  static let validatorAvailable =
    (try? runTool(python, ["-c", "import jsonschema"]).status) == 0

  /// Validates each document (one per line of stdin, as JSON) and prints ok or the first error.
  static let validatorScript = """
    import json, sys, jsonschema
    schema = json.load(open(sys.argv[1]))
    jsonschema.Draft202012Validator.check_schema(schema)
    v = jsonschema.Draft202012Validator(schema)
    for line in sys.stdin:
        errors = sorted(v.iter_errors(json.loads(line)), key=lambda e: list(e.path))
        print("ok" if not errors else "invalid " + "/".join(map(str, errors[0].path)))
    """

  /// Mutations of a valid scenario; each must be rejected by both.
  static let invalidDocuments: [String] = [
    scenarioText(
      expect: #"[{"kind": "notification", "name": "TorBootstrapDidStall", "by": "soon"}]"#),
    scenarioText(expect: #"[{"kind": "notification", "name": "TorBootstrapDidStall", "bye": 75}]"#),
    scenarioText(expect: #"[{"kind": "notification", "by": 75}]"#),
    scenarioText(expect: #"[{"kind": "leak-caught", "classes": []}]"#),
    scenarioText(expect: #"[{"kind": "leak-caught", "classes": ["dns", "dns"]}]"#),
    scenarioText(expect: #"[{"kind": "leak-caught", "classes": ["smtp"]}]"#),
    scenarioText(expect: #"[{"kind": "no-leak", "classes": ["dns"]}]"#),
    scenarioText(expect: #"[{"kind": "events-in-order", "events": ["one"]}]"#),
    scenarioText(expect: #"[{"kind": "proxy-mode", "mode": "tor"}]"#),
    scenarioText(expect: #"[{"kind": "bootstrap-summary", "text": 3}]"#),
    scenarioText(expect: #"[]"#),
    scenarioText(expect: #"[{"kind": "event", "by": 3}]"#),
    scenarioText(expect: #"[{"kind": "no-event", "event": "x", "by": 3}]"#),
    scenarioText(app: #"{"profile": "bitchat", "actions": [{"at": 0, "do": "set-preference"}]}"#),
    scenarioText(app: #"{"profile": "bitchat", "actions": [{"at": 0, "do": "fly"}]}"#),
    scenarioText(app: #"{"profile": "bitchat", "actions": [{"do": "start"}]}"#),
    scenarioText(
      app: #"{"profile": "bitchat", "actions": [{"at": 0, "do": "start", "enabled": true}]}"#),
    scenarioText(
      app: #"{"profile": "bitchat", "activation": "maybe", "actions": [{"at": 0, "do": "start"}]}"#),
    scenarioText(app: #"{"profile": "bitchat", "actions": [{"at": 0, "do": "add-relay"}]}"#),
    scenarioText(app: #"{"actions": [{"at": 0, "do": "start"}]}"#),
    scenarioText().replacingOccurrences(of: #""never""#, with: #""sometimes""#),
    scenarioText().replacingOccurrences(of: #""arti""#, with: #""onionbrowser""#),
    scenarioText().replacingOccurrences(of: #""duration": 90"#, with: #""duration": 0"#),
    scenarioText().replacingOccurrences(of: #""title": "t","#, with: ""),
    scenarioText().replacingOccurrences(of: #""title": "t","#, with: #""title": "","#),
    scenarioText().replacingOccurrences(
      of: #""title": "t","#, with: #""title": "t", "colour": "red","#),
    scenarioText().replacingOccurrences(
      of: #""duration": 90,"#,
      with: #""duration": 90, "network": {"censor": [{"action": "drop", "to": "Tor Guards"}]},"#),
    scenarioText().replacingOccurrences(
      of: #""duration": 90,"#,
      with: #""duration": 90, "network": {"censor": [{"action": "block", "to": "world"}]},"#),
    scenarioText().replacingOccurrences(
      of: #""duration": 90,"#,
      with:
        #""duration": 90, "network": {"censor": [{"action": "drop", "to": "world", "port": 70000}]},"#
    ),
    scenarioText().replacingOccurrences(
      of: #""duration": 90,"#,
      with: #""duration": 90, "network": {"dnsPoisoning": [{"name": "a.org", "answer": "lie"}]},"#),
    scenarioText().replacingOccurrences(
      of: #""bootstrap": "never""#,
      with: #""bootstrap": "never", "faults": [{"destination": "a.org:443", "fault": "latency"}]"#),
    scenarioText().replacingOccurrences(
      of: #""bootstrap": "never""#,
      with: #""bootstrap": "never", "faults": [{"destination": "a.org", "fault": "drop"}]"#),
    scenarioText().replacingOccurrences(
      of: #""duration": 90,"#, with: #""duration": 90, "weakness": 5,"#),
    scenarioText().replacingOccurrences(
      of: #""duration": 90,"#,
      with:
        #""duration": 90, "network": {"censor": [{"action": "reset", "to": "world", "protocol": "udp"}]},"#
    ),
    scenarioText().replacingOccurrences(
      of: #""duration": 90,"#,
      with:
        #""duration": 90, "network": {"censor": [{"action": "drop", "to": "any", "protocol": "icmp", "port": 7}]},"#
    ),
    scenarioText().replacingOccurrences(
      of: #""duration": 90,"#,
      with:
        #""duration": 90, "network": {"censor": [{"action": "drop", "to": "any", "afterBytes": 7}]},"#
    ),
    scenarioText().replacingOccurrences(of: #""never""#, with: #""stall:bogus_phase""#),
    scenarioText().replacingOccurrences(of: #""never""#, with: #""stall:conn:slowly""#),
    scenarioText().replacingOccurrences(of: #""never""#, with: #""flap:0""#),
    scenarioText().replacingOccurrences(of: #""never""#, with: #""healthy:5:6""#),
    // The lanes: each one's fields are refused in the other.
    scenarioText().replacingOccurrences(
      of: #""bootstrap": "never""#, with: #""bootstrap": "never", "client": "debian-tor""#),
    scenarioText(expect: #"[{"kind": "bootstrap-stuck", "atMost": 5}]"#),
    scenarioText(expect: #"[{"kind": "flows-only-to", "ports": [4433]}]"#),
    scenarioText().replacingOccurrences(
      of: #""duration": 90,"#,
      with: #""duration": 90, "network": {"censor": [{"action": "drop", "to": "tor-bridge"}]},"#),
    scenarioText().replacingOccurrences(
      of: #""title": "t","#, with: #""lane": "bus", "title": "t","#),
    realScenarioText(tor: #"{"client": "debian-tor", "personality": "ctor"}"#),
    realScenarioText(tor: #"{"client": "debian-tor", "bridges": ["meek"]}"#),
    realScenarioText(
      tor: #"{"client": "debian-tor", "bridges": ["testnet-obfs4", "testnet-obfs4"]}"#),
    realScenarioText(tor: #"{"client": "arti"}"#),
    realScenarioText(tor: #"{"bridges": []}"#),
    realScenarioText(network: #"{"censor": [{"action": "drop", "to": "tor-guards"}]}"#),
    realScenarioText(app: #"{"profile": "bitchat", "actions": [{"at": 0, "do": "tor-crash"}]}"#),
    realScenarioText(duration: "600"),
    realScenarioText(expect: #"[{"kind": "bootstrap-reaches", "progress": 101}]"#),
    realScenarioText(expect: #"[{"kind": "bootstrap-reaches"}]"#),
    realScenarioText(expect: #"[{"kind": "bootstrap-stuck", "atMost": 5, "tag": "connecting"}]"#),
    realScenarioText(expect: #"[{"kind": "bootstrap-problem", "reason": "SLOW"}]"#),
    realScenarioText(expect: #"[{"kind": "flows-only-to", "ports": []}]"#),
    realScenarioText(expect: #"[{"kind": "flows-only-to", "ports": [1, 1]}]"#),
    realScenarioText(expect: #"[{"kind": "flows-only-to", "ports": [70000]}]"#),
    realScenarioText(expect: #"[{"kind": "bootstrap-through-bridge", "ports": [1]}]"#),
    // Replayed OONI measurements (failclosed ooni convert).
    realScenarioText(
      expect: #"[{"kind": "reachability", "targets": "bridge-obfs4", "reachable": 2}]"#),
    realScenarioText(expect: #"[{"kind": "reachability", "targets": "exits", "reachable": 1}]"#),
    realScenarioText(expect: #"[{"kind": "bootstrap-stops-at", "progress": 5}]"#),
    realScenarioText(
      network: #"{"censor": [{"action": "close-after-connect", "to": "any", "protocol": "udp"}]}"#),
    realScenarioText(
      network: #"{"censor": [{"action": "drop", "to": "tor-relays", "measured": ""}]}"#),
    realScenarioText().replacingOccurrences(
      of: #""title": "t","#, with: #""title": "t", "ooni": {"source": "x.json"},"#),
    scenarioText().replacingOccurrences(
      of: #""title": "t","#,
      with: #""title": "t", "ooni": {"source": "x.json", "measurement": "m"},"#),
    scenarioText().replacingOccurrences(
      of: #""duration": 90,"#,
      with:
        #""duration": 90, "network": {"censor": [{"action": "drop", "to": "testnet-auth1-orport"}]},"#
    ),
  ]

  /// Valid documents beyond the library files: every real-lane expectation and target.
  static let validDocuments: [String] = [
    realScenarioText(
      network: """
        {"censor": [{"action": "reset", "to": "tor-bridge", "protocol": "tcp"},
         {"action": "drop", "to": "tor-relays", "port": 9030}, {"action": "drop", "to": "any", "longerThan": 100}]}
        """,
      expect: """
        [{"kind": "bootstrap-reaches", "progress": 100},
         {"kind": "bootstrap-stuck", "atMost": 10, "tag": "conn_done", "because": "b"},
         {"kind": "bootstrap-problem", "reason": "CONNECTREFUSED"},
         {"kind": "bootstrap-through-bridge"}, {"kind": "flows-only-to", "ports": [4433, 9001]},
         {"kind": "requests-queued-before-ready"}]
        """),
    realScenarioText(tor: #"{"client": "debian-tor", "note": "n"}"#),
    realScenarioText(
      network: """
        {"censor": [{"action": "reset-after-handshake", "to": "testnet-auth2-orport",
          "measured": "ZZ 2025-03-02 AS1, 8/10 or_port_dirauth connection_reset"},
         {"action": "close-after-connect", "to": "testnet-auth3-dirport", "protocol": "tcp"},
         {"action": "icmp-net-unreachable", "to": "testnet-bridge1-obfs4"}]}
        """,
      expect: """
        [{"kind": "bootstrap-stops-at", "progress": 10, "tag": "conn_done", "measured": "m"},
         {"kind": "reachability", "targets": "relay-orports", "reachable": 2,
          "failure": "eof_error", "measured": "m", "because": "b"}]
        """
    ).replacingOccurrences(
      of: #""title": "t","#,
      with:
        #""title": "t", "ooni": {"source": "x.json", "measurement": "m", "notes": ["n"], "notCensorship": ["r"]},"#
    ),
    scenarioText().replacingOccurrences(
      of: #""title": "t","#, with: #""lane": "mock", "title": "t", "gap": "g","#),
  ]

  @Test(
    .needs("needs /usr/bin/python3 with python3-jsonschema", if: validatorAvailable))
  func theSchemaAndTheParserAgreeOnEveryLibraryFileAndEveryMutation() throws {
    try #require(Self.validatorAvailable, "needs /usr/bin/python3 with python3-jsonschema")
    let files =
      try ScenarioLoader.scenarioFiles(in: scenariosDirectory)
      + ScenarioLoader.scenarioFiles(in: scenariosDirectory + "/ooni")
    var documents: [(label: String, text: String, valid: Bool)] = []
    for file in files {
      let text = try String(contentsOfFile: file, encoding: .utf8)
      documents.append((file, text, true))
    }
    for (i, text) in Self.invalidDocuments.enumerated() {
      documents.append(("mutation \(i)", text, false))
    }
    for (i, text) in Self.validDocuments.enumerated() {
      documents.append(("valid \(i)", text, true))
    }
    // Each fault kind's fields, made from the list.
    for (i, fault) in StreamFaultKindsTests.schemaCases().enumerated() {
      documents.append(("fault \(i)", fault.text, fault.valid))
    }
    // One line per document for the validator.
    let lines = try documents.map { doc -> String in
      try JSONParser.parse(doc.text).serialized()
    }
    let result = try runTool(
      Self.python,
      ["-c", Self.validatorScript, scenariosDirectory + "/scenario.schema.json"],
      stdin: lines.joined(separator: "\n") + "\n")
    #expect(result.status == 0, "\(result.output)")
    let verdicts = result.output.split(separator: "\n").map(String.init)
    #expect(verdicts.count == documents.count, "\(result.output)")
    for (doc, verdict) in zip(documents, verdicts) {
      let swiftAccepts = (try? ScenarioParser.parse(doc.text, file: doc.label)) != nil
      #expect((verdict == "ok") == doc.valid, "schema on \(doc.label): \(verdict)")
      #expect(swiftAccepts == doc.valid, "parser on \(doc.label)")
    }
  }

  @Test func theSchemaStatesTheParsersPatternsAndEnums() throws {
    let text = try String(
      contentsOfFile: scenariosDirectory + "/scenario.schema.json", encoding: .utf8)
    let schema = try JSONParser.parse(text)
    let tor = schema["$defs"]?["mockTor"]?["properties"]
    #expect(tor?["bootstrap"]?["pattern"] == .string(ScenarioParser.Pattern.bootstrapPlan))
    #expect(
      schema["properties"]?["lane"]?["enum"] == .array(Lane.allCases.map { .string($0.rawValue) }))
    let real = schema["$defs"]?["realTor"]?["properties"]
    #expect(
      real?["client"]?["enum"]
        == .array(RealTorPlan.Client.allCases.map { .string($0.rawValue) }))
    #expect(
      real?["bridges"]?["items"]?["enum"]
        == .array(RealTorPlan.Bridge.allCases.map { .string($0.rawValue) }))
    #expect(
      schema["$defs"]?["fault"]?["properties"]?["destination"]?["pattern"]
        == .string(ScenarioParser.Pattern.destination))
    #expect(
      schema["$defs"]?["censorRule"]?["properties"]?["to"]?["pattern"]
        == .string(ScenarioParser.Pattern.host))
    #expect(
      schema["$defs"]?["expectation"]?["properties"]?["kind"]?["enum"]
        == .array(ScenarioExpectation.kinds.map { .string($0) }))
    #expect(
      schema["$defs"]?["action"]?["properties"]?["do"]?["enum"]
        == .array(ActionVerbs.scenarioNames().map { .string($0) }))
  }
}
