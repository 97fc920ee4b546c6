import Vocabulary

/// The JSON Schema of one `tor.faults` entry (`$defs.fault` of Scenarios/scenario.schema.json),
/// made from the fault kinds so that editors accept what the parser accepts: each kind's
/// required fields, and only its own fields. A test holds the committed schema to it
/// (FAILCLOSED_REGENERATE=1 rewrites it), so a new kind needs no edit to the schema by hand.
public enum StreamFaultSchema {
  public static func definition(of kinds: [StreamFaultKind] = StreamFaultKinds.all) -> JSONValue {
    var properties: [(key: String, value: JSONValue)] = [
      (
        "destination",
        .object([
          ("type", .string("string")), ("pattern", .string(ScenarioParser.Pattern.destination)),
        ])
      ),
      ("fault", .object([("enum", strings(kinds.map(\.name)))])),
    ]
    // A field shared by kinds has one meaning and range (a test holds them equal).
    for parameter in kinds.flatMap(\.parameters)
    where !properties.contains(where: { $0.key == parameter.field }) {
      properties.append((parameter.field, field(parameter)))
    }
    properties.append(
      (
        "note",
        .object([
          ("type", .string("string")), ("minLength", .number(1)),
          ("description", .string("a remark for readers; ignored by the runner")),
        ])
      ))
    return .object([
      ("type", .string("object")),
      ("description", .string("a fault the mock Tor applies to streams towards one destination")),
      ("required", strings(["destination", "fault"])), ("additionalProperties", .bool(false)),
      ("properties", .object(properties)), ("allOf", .array(kinds.map(rule))),
    ])
  }

  /// What a fault of `kind` must and may carry.
  private static func rule(_ kind: StreamFaultKind) -> JSONValue {
    let required = kind.parameters.filter(\.isRequired).map(\.field)
    var then: [(key: String, value: JSONValue)] = []
    if !required.isEmpty { then.append(("required", strings(required))) }
    let allowed = ["destination", "fault"] + kind.parameters.map(\.field) + ["note"]
    then.append(("propertyNames", .object([("enum", strings(allowed))])))
    return .object([
      (
        "if",
        .object([
          ("required", strings(["fault"])),
          ("properties", .object([("fault", .object([("const", .string(kind.name))]))])),
        ])
      ),
      ("then", .object(then)),
    ])
  }

  private static func field(_ parameter: StreamFaultParameter) -> JSONValue {
    let bounds = { (range: ClosedRange<Int>) -> [(key: String, value: JSONValue)] in
      [
        ("minimum", .number(Double(range.lowerBound))),
        ("maximum", .number(Double(range.upperBound))),
      ]
    }
    var members: [(key: String, value: JSONValue)] = [("type", .string("integer"))]
    if parameter.ranges.count == 1 {
      members += bounds(parameter.ranges[0])
    } else {
      members.append(("anyOf", .array(parameter.ranges.map { .object(bounds($0)) })))
    }
    members.append(("description", .string(parameter.meaning)))
    return .object(members)
  }

  private static func strings(_ values: [String]) -> JSONValue {
    .array(values.map { .string($0) })
  }
}
