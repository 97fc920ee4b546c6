import FailClosedSupport
import Foundation
import MockTor
import Testing
import Vocabulary

@testable import Lanes
@testable import Scenarios

/// Stream faults are one list (Vocabulary's StreamFaultKinds) that the scenario parser, the
/// runner's mock command line, the schema and the guide read, each kind spelled as toxics of
/// the mock's registry. Every field of every kind, at the ends of its ranges, goes through
/// parser, command line and the mock's toxic parser, and each value changes what the mock
/// does; a kind added in a test is read everywhere.
@Suite struct StreamFaultKindsTests {
  static func scenarioText(faults: [String]) -> String {
    """
    {"title": "t", "proves": "p", "duration": 30,
     "tor": {"personality": "arti", "bootstrap": "healthy", "faults": [\(faults.joined(separator: ", "))]},
     "app": {"profile": "bitchat", "actions": [{"at": 0, "do": "start"}]},
     "expect": [{"kind": "no-leak"}]}
    """
  }

  /// One fault entry, its fields in the kind's order.
  static func faultJSON(
    _ kind: StreamFaultKind, _ values: [String: Int], destination: String = "relay.test:443"
  ) -> String {
    let fields = kind.parameters.compactMap { p in values[p.field].map { ", \"\(p.field)\": \($0)" }
    }
    return #"{"destination": "\#(destination)", "fault": "\#(kind.name)""# + fields.joined() + "}"
  }

  /// The SPEC of each `--fault HOST=SPEC` the runner gives the mock for this scenario.
  static func mockSpecs(_ text: String, kinds: [StreamFaultKind] = StreamFaultKinds.all) throws
    -> [String]
  {
    let scenario = try ScenarioParser.parse(text, file: "t.json", faultKinds: kinds)
    let plan = try #require(scenario.tor.mock)
    let line = ScenarioCommandLines.mockTor(
      plan, executable: "failclosed", timeScale: 1, guards: [], eventLog: "log")
    return line.indices.filter { line[$0] == "--fault" }.map { index in
      let spec = line[index + 1]
      return String(spec[spec.index(after: spec.firstIndex(of: "=")!)...])
    }
  }

  /// The kind's fields at the lower end of their first range.
  static func lowest(_ kind: StreamFaultKind) -> [String: Int] {
    Dictionary(uniqueKeysWithValues: kind.parameters.map { ($0.field, $0.ranges[0].lowerBound) })
  }

  // MARK: every kind, from the list

  /// The property the old switch broke: blackhole's required afterBytes never reached the
  /// mock (every value was spelled "blackhole"), and a reply code the parser took (255) was
  /// one the mock refused.
  @Test(arguments: StreamFaultKinds.all.map(\.name))
  func everyFieldReachesTheMockAndChangesWhatItDoes(_ name: String) throws {
    let kind = try #require(StreamFaultKinds.kind(named: name))
    for parameter in kind.parameters {
      var seen: [String: Int] = [:]
      for value in parameter.ranges.flatMap({ [$0.lowerBound, $0.upperBound] }) {
        var values = Self.lowest(kind)
        values[parameter.field] = value
        let text = Self.scenarioText(faults: [Self.faultJSON(kind, values)])
        let specs = try Self.mockSpecs(text)
        try #require(specs.count == 1, "\(name): \(specs)")
        // The mock takes every value the parser takes, and writes back what it was given.
        let toxics = try StreamToxics(parsing: specs[0])
        #expect(toxics.description == specs[0], "\(name).\(parameter.field)=\(value)")
        if let earlier = seen[toxics.description] {
          Issue.record(
            "\(name).\(parameter.field): \(earlier) and \(value) both reach the mock as '\(toxics)'"
          )
        }
        seen[toxics.description] = value
      }
      // Left out: a required field is named by the parser; an optional one is its default.
      var without = Self.lowest(kind)
      without[parameter.field] = nil
      let text = Self.scenarioText(faults: [Self.faultJSON(kind, without)])
      if let fallback = parameter.defaultValue {
        var explicit = without
        explicit[parameter.field] = fallback
        #expect(
          try Self.mockSpecs(text)
            == Self.mockSpecs(Self.scenarioText(faults: [Self.faultJSON(kind, explicit)])))
      } else {
        #expect(throws: ScenarioError.self, "\(name) without \(parameter.field)") {
          try ScenarioParser.parse(text, file: "t.json")
        }
      }
      // Just outside each range: refused by the parser, never handed to the mock.
      for outside in parameter.ranges.flatMap({ [$0.lowerBound - 1, $0.upperBound + 1] })
      where !parameter.accepts(outside) {
        var values = Self.lowest(kind)
        values[parameter.field] = outside
        #expect(throws: ScenarioError.self, "\(name).\(parameter.field)=\(outside)") {
          try ScenarioParser.parse(
            Self.scenarioText(faults: [Self.faultJSON(kind, values)]), file: "t.json")
        }
      }
    }
    // A kind without fields (drop) still reaches the mock as registered toxics.
    let specs = try Self.mockSpecs(
      Self.scenarioText(faults: [Self.faultJSON(kind, Self.lowest(kind))]))
    #expect(try StreamToxics(parsing: specs[0]).toxics.count == kind.toxics.count)
  }

  /// What the command line reads is what the parser asked for: a spelling's value comes from a
  /// field of its own kind (reset's afterBytes was read but never declared), and every toxic
  /// named is one the mock registers.
  @Test func eachSpellingReadsOnlyItsKindsFieldsAndNamesARegisteredToxic() {
    for kind in StreamFaultKinds.all {
      #expect(!kind.toxics.isEmpty, "\(kind.name)")
      for toxic in kind.toxics {
        #expect(StreamToxics.kind(named: toxic.toxic) != nil, "\(kind.name): \(toxic.toxic)")
        if let field = toxic.valueField {
          #expect(kind.parameter(named: field) != nil, "\(kind.name) reads \(field)")
        }
      }
    }
    let names = StreamFaultKinds.all.map(\.name)
    #expect(Set(names).count == names.count, "a kind listed twice: \(names)")
    // A field shared by kinds means one thing (the schema states it once).
    let parameters = StreamFaultKinds.all.flatMap(\.parameters)
    for parameter in parameters {
      for other in parameters where other.field == parameter.field {
        #expect(other.meaning == parameter.meaning && other.ranges == parameter.ranges)
      }
    }
  }

  @Test func aFieldOfAnotherKindIsRefusedNamingWhoseItIs() throws {
    let text = Self.scenarioText(faults: [
      #"{"destination": "relay.test:443", "fault": "drop", "ms": 200}"#
    ])
    #expect {
      try ScenarioParser.parse(text, file: "t.json")
    } throws: {
      "\($0)".contains(
        "tor.faults[0].ms: a field of latency, slow-close faults; a drop fault takes none")
    }
  }

  /// The mock keeps one SPEC per host (a second `--fault` replaced the first), so two faults
  /// on one host reach it as one SPEC with both toxics.
  @Test func faultsOfOneHostReachTheMockTogether() throws {
    let text = Self.scenarioText(faults: [
      Self.faultJSON(StreamFaultKinds.latency, ["ms": 200]),
      Self.faultJSON(StreamFaultKinds.socksError, ["reply": 0xF2], destination: "relay.test:80"),
      Self.faultJSON(StreamFaultKinds.drop, [:], destination: "other.test:443"),
    ])
    let specs = try Self.mockSpecs(text)
    #expect(specs == ["latency=200,reply=0xf2", "blackhole"])
    #expect(try StreamToxics(parsing: specs[0]).toxics.map(\.toxicName) == ["reply", "latency"])
  }

  // MARK: a new kind, one entry

  /// A kind no one has, on a toxic the mock already has: bandwidth, from a `kbps` field.
  static let throttle = StreamFaultKind(
    "throttle", "a test's kind: the flow towards the app is paced",
    parameters: [StreamFaultParameter("kbps", "kilobytes per second", in: [1...1024])],
    mock: [ToxicSpelling("bandwidth", value: "kbps")])
  static let withThrottle = StreamFaultKinds.all + [throttle]

  @Test func aKindAddedToTheListIsParsedAndReachesTheMock() throws {
    let text = Self.scenarioText(faults: [Self.faultJSON(Self.throttle, ["kbps": 64])])
    let scenario = try ScenarioParser.parse(text, file: "t.json", faultKinds: Self.withThrottle)
    #expect(
      scenario.tor.mock?.faults
        == [StreamFault(destination: "relay.test:443", kind: Self.throttle, values: ["kbps": 64])])
    let specs = try Self.mockSpecs(text, kinds: Self.withThrottle)
    #expect(specs == ["bandwidth=64"])
    #expect(
      try StreamToxics(parsing: specs[0]) == StreamToxics([BandwidthToxic(bytesPerSecond: 65_536)]))
    // Its field's rule comes from the entry too.
    #expect {
      try ScenarioParser.parse(
        Self.scenarioText(faults: [Self.faultJSON(Self.throttle, [:])]), file: "t.json",
        faultKinds: Self.withThrottle)
    } throws: { "\($0)".contains(#"missing "kbps": expected kilobytes per second"#) }
    // The guide's table and the schema carry it.
    #expect(
      StreamFaultKinds.guideTable(of: Self.withThrottle).contains(
        "| `throttle` | `kbps`: kilobytes per second, 1 to 1024 | `bandwidth=kbps` |"))
    let schema = StreamFaultSchema.definition(of: Self.withThrottle)
    #expect(
      schema["properties"]?["fault"]?["enum"] == .array(Self.withThrottle.map { .string($0.name) }))
    #expect(schema["properties"]?["kbps"]?["maximum"] == .number(1024))
    // Without the entry the parser refuses the kind (the canary).
    #expect {
      try ScenarioParser.parse(text, file: "t.json")
    } throws: { "\($0)".contains(#"got "throttle""#) }
  }

  // MARK: the docs

  /// Scenarios/README.md carries the guide's table, and the committed schema's `$defs.fault`
  /// is the one made from the list (FAILCLOSED_REGENERATE=1 writes it).
  @Test func theGuideAndTheSchemaCarryTheList() throws {
    let guide = try String(contentsOfFile: scenariosDirectory + "/README.md", encoding: .utf8)
    let table = StreamFaultKinds.guideTable().split(separator: "\n").map { "  " + $0 }
      .joined(separator: "\n")
    #expect(guide.contains(table), "\(table)")
    let path = scenariosDirectory + "/scenario.schema.json"
    let expected = StreamFaultSchema.definition()
    if ProcessInfo.processInfo.environment["FAILCLOSED_REGENERATE"] == "1" {
      let schema = try JSONParser.parse(String(contentsOfFile: path, encoding: .utf8))
      try (Self.replacingFaultDefinition(in: schema, with: expected).serialized(indent: 2) + "\n")
        .write(toFile: path, atomically: true, encoding: .utf8)
    }
    let schema = try JSONParser.parse(String(contentsOfFile: path, encoding: .utf8))
    #expect(
      schema["$defs"]?["fault"] == expected,
      "scenario.schema.json's $defs.fault must be:\n\(expected.serialized(indent: 2))")
  }

  static func replacingFaultDefinition(in schema: JSONValue, with fault: JSONValue) -> JSONValue {
    guard case .object(var members) = schema,
      let defsIndex = members.firstIndex(where: { $0.key == "$defs" }),
      case .object(var defs) = members[defsIndex].value,
      let faultIndex = defs.firstIndex(where: { $0.key == "fault" })
    else { return schema }
    defs[faultIndex].value = fault
    members[defsIndex].value = .object(defs)
    return .object(members)
  }

  /// Documents for SchemaAgreementTests, made from the list: each kind with its fields, and
  /// without each required one, with each just out of range, and with another kind's field.
  static func schemaCases(_ kinds: [StreamFaultKind] = StreamFaultKinds.all) -> [(
    text: String, valid: Bool
  )] {
    var cases: [(text: String, valid: Bool)] = []
    let document = { (fault: String) in scenarioText(faults: [fault]) }
    let allFields = Set(kinds.flatMap { $0.parameters.map(\.field) })
    for kind in kinds {
      let lowest = lowest(kind)
      cases.append((document(faultJSON(kind, lowest, destination: "a.org:443")), true))
      for parameter in kind.parameters {
        var values = lowest
        values[parameter.field] = nil
        cases.append(
          (document(faultJSON(kind, values, destination: "a.org:443")), !parameter.isRequired))
        for outside in parameter.ranges.flatMap({ [$0.lowerBound - 1, $0.upperBound + 1] })
        where !parameter.accepts(outside) {
          values = lowest
          values[parameter.field] = outside
          cases.append((document(faultJSON(kind, values, destination: "a.org:443")), false))
        }
      }
      for field in allFields.subtracting(kind.parameters.map(\.field)).sorted() {
        let fault =
          faultJSON(kind, lowest, destination: "a.org:443").dropLast() + ", \"\(field)\": 1}"
        cases.append((document(String(fault)), false))
      }
    }
    return cases
  }
}
