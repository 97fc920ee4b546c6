import Foundation
import Testing

@testable import Scenarios

/// The expectation kinds are units registered in one list (ExpectationKinds.all): the parser
/// and the judge both go through it. These hold the list against scenario.schema.json (names,
/// each kind's fields, the real-Tor-only kinds), with a canary: a kind left out of the list.
@Suite struct ExpectationUnitsTests {
  static func schema() throws -> JSONValue {
    try JSONParser.parse(
      String(contentsOfFile: scenariosDirectory + "/scenario.schema.json", encoding: .utf8))
  }

  /// Where `units` and the schema disagree, one line each; empty when they agree.
  static func disagreements(_ units: [any ExpectationUnit.Type], schema: JSONValue) -> [String] {
    var problems: [String] = []
    let expectation = schema["$defs"]?["expectation"]
    guard case .array(let kindValues)? = expectation?["properties"]?["kind"]?["enum"] else {
      return ["the schema has no expectation kind enum"]
    }
    let schemaKinds = kindValues.compactMap { value -> String? in
      if case .string(let s) = value { return s }
      return nil
    }
    let names = units.map { $0.name }
    for kind in schemaKinds where !names.contains(kind) {
      problems.append("\"\(kind)\" is in the schema but no unit in the list has that name")
    }
    for name in names where !schemaKinds.contains(name) {
      problems.append("\"\(name)\" is a unit but not a kind in the schema")
    }
    if Set(names).count != names.count { problems.append("a kind is listed twice") }
    // Each kind's own fields: the properties of its `then` branch besides kind and because.
    var fieldsByKind: [String: Set<String>] = [:]
    if case .array(let branches)? = expectation?["allOf"] {
      for branch in branches {
        guard case .string(let kind)? = branch["if"]?["properties"]?["kind"]?["const"],
          case .object(let members)? = branch["then"]?["properties"]
        else { continue }
        fieldsByKind[kind] = Set(members.map(\.key)).subtracting(["kind", "because"])
      }
    }
    for unit in units {
      guard let fields = fieldsByKind[unit.name] else {
        problems.append("\"\(unit.name)\": the schema states no fields for it")
        continue
      }
      if fields != Set(unit.fields) {
        problems.append(
          "\"\(unit.name)\": the schema's fields \(fields.sorted()) are not the unit's "
            + "\(unit.fields.sorted())")
      }
    }
    // The kinds a mock-lane file may not use.
    var realOnly: Set<String> = []
    if case .array(let top)? = schema["allOf"] {
      for rule in top {
        if case .array(let banned)? = rule["else"]?["properties"]?["expect"]?["items"]?[
          "properties"]?["kind"]?["not"]?["enum"]
        {
          for value in banned { if case .string(let s) = value { realOnly.insert(s) } }
        }
      }
    }
    let unitsRealOnly = Set(units.filter { $0.realTorOnly }.map { $0.name })
    if realOnly != unitsRealOnly {
      problems.append(
        "real-Tor-only kinds: the schema says \(realOnly.sorted()), the units "
          + "\(unitsRealOnly.sorted())")
    }
    return problems
  }

  @Test func theListAndTheSchemaAgree() throws {
    #expect(Self.disagreements(ExpectationKinds.all, schema: try Self.schema()) == [])
  }

  /// The canary: without one unit the list no longer matches the schema, the test says which
  /// kind, and the parser rejects the kind (it cannot fall back to another one).
  @Test func aKindLeftOutOfTheListIsCaught() throws {
    let schema = try Self.schema()
    for (index, unit) in ExpectationKinds.all.enumerated() {
      var units = ExpectationKinds.all
      units.remove(at: index)
      let problems = Self.disagreements(units, schema: schema)
      #expect(
        problems.contains { $0.contains("\"\(unit.name)\" is in the schema") },
        "\(unit.name): \(problems)")
      #expect(ExpectationKinds.unit(named: unit.name, in: units) == nil)
    }
  }

  /// A unit whose fields drift from the schema is caught too.
  @Test func aFieldLeftOutOfAUnitIsCaught() throws {
    struct Drifted: ExpectationUnit {
      static let name = "notification"
      static let fields = ["name", "by"]
      static func parse(_ input: ExpectationInput) throws(ScenarioError) -> Self { Self() }
      func judge(_ facts: ExpectationFacts) -> ExpectationCheck { (.met, "") }
      var sentence: String { "" }
    }
    var units = ExpectationKinds.all
    units[units.firstIndex { $0.name == "notification" }!] = Drifted.self
    let problems = Self.disagreements(units, schema: try Self.schema())
    #expect(problems.count == 1 && problems[0].hasPrefix("\"notification\": the schema's fields"))
  }

  /// Each kind parses through its own unit and reads back as that unit, with its sentence.
  @Test func eachKindParsesThroughItsOwnUnit() throws {
    let samples: [String: String] = [
      "no-leak": #"{"kind": "no-leak"}"#,
      "leak-caught": #"{"kind": "leak-caught", "classes": ["dns"]}"#,
      "requests-queued-before-ready": #"{"kind": "requests-queued-before-ready"}"#,
      "notification": #"{"kind": "notification", "name": "TorDidBecomeReady", "by": 10}"#,
      "no-notification": #"{"kind": "no-notification", "name": "TorWillRestart"}"#,
      "event": #"{"kind": "event", "event": "TorWillStart", "by": 5}"#,
      "no-event": #"{"kind": "no-event", "event": "TorWillStart"}"#,
      "request-sent": #"{"kind": "request-sent", "transport": "tor", "by": 5}"#,
      "proxy-mode": #"{"kind": "proxy-mode", "mode": "tor", "at": 5}"#,
      "bootstrap-summary": #"{"kind": "bootstrap-summary", "text": "Ready"}"#,
      "events-in-order":
        #"{"kind": "events-in-order", "events": ["TorWillStart", "TorDidBecomeReady"]}"#,
      "traffic-only-to-tor": #"{"kind": "traffic-only-to-tor"}"#,
      "clearnet-by-user-choice": #"{"kind": "clearnet-by-user-choice"}"#,
      "bootstrap-reaches": #"{"kind": "bootstrap-reaches", "progress": 100}"#,
      "bootstrap-stuck": #"{"kind": "bootstrap-stuck", "atMost": 10}"#,
      "bootstrap-problem": #"{"kind": "bootstrap-problem", "reason": "TIMEOUT"}"#,
      "bootstrap-through-bridge": #"{"kind": "bootstrap-through-bridge"}"#,
      "flows-only-to": #"{"kind": "flows-only-to", "ports": [9001]}"#,
      "bootstrap-stops-at": #"{"kind": "bootstrap-stops-at", "progress": 10, "tag": "conn_done"}"#,
      "reachability": #"{"kind": "reachability", "targets": "bridge-obfs4", "reachable": 0}"#,
      "program-succeeds": #"{"kind": "program-succeeds", "exit": 0, "output": "200 OK"}"#,
      "fails-closed": #"{"kind": "fails-closed"}"#,
    ]
    #expect(Set(samples.keys) == Set(ScenarioExpectation.kinds))
    for unit in ExpectationKinds.all {
      let text = try #require(samples[unit.name])
      let parsed = try ScenarioParser.parseExpectation(
        try JSONParser.parse(text), file: "t.json", path: "expect[0]",
        lane: unit.realTorOnly ? .realTor : .mock)
      #expect(parsed.kind == unit.name)
      #expect(type(of: parsed.unit) == unit)
      #expect(!parsed.sentence.isEmpty)
      if unit.realTorOnly {
        #expect(throws: ScenarioError.self) {
          try ScenarioParser.parseExpectation(
            try JSONParser.parse(text), file: "t.json", path: "expect[0]", lane: .mock)
        }
      }
    }
  }
}
