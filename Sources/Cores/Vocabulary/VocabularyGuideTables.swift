/// The guide's tables of the vocabularies (Scenarios/README.md carries them verbatim; a test
/// compares), so the docs list what the parsers accept and nothing else.
extension ActionVerbs {
  /// Verb, the scenario file's field, the actions file's field, the apps, what it does.
  public static func guideTable(of verbs: [ActionVerb] = all) -> String {
    var lines = [
      "| verb | scenario field | actions-file field | apps | what |", "|---|---|---|---|---|",
    ]
    for verb in verbs {
      let apps: String
      switch verb.performer {
      case .mockTor: apps = "harness (mock lane)"
      case .driver: apps = "driver"
      case .app:
        apps =
          verb.apps == .all ? "all" : verb.apps.contains(.bitchat) ? "bitchat" : "onion-browser"
      }
      lines.append(
        "| `\(verb.name)` | \(cell(verb.inScenarios ? verb.scenarioArgument : nil)) | "
          + "\(cell(verb.inActionsFiles ? verb.driverArgument : nil)) | \(apps) | \(verb.summary) |"
      )
    }
    return lines.joined(separator: "\n")
  }

  private static func cell(_ argument: ActionArgument?) -> String {
    guard let argument else { return "" }
    let values: String
    switch argument.values {
    case .bool: values = "true/false"
    case .seconds: values = "seconds"
    case .text(let fallback): values = fallback.map { "text (default \($0))" } ?? "text"
    case .choice(let words, let fallback):
      values = words.joined(separator: "/") + (fallback.map { " (default \($0))" } ?? "")
    }
    return "`\(argument.field)`: \(values)"
  }
}

extension CensorAction {
  /// The actions a scenario's censor rule may take, with what each does.
  public static var guideTable: String {
    (["| censor action | what the censor does |", "|---|---|"]
      + scenarioRules.map {
        "| `\($0.rawValue)` | \($0.summary)\($0.isTCPOnly ? " (TCP only)" : "") |"
      })
      .joined(separator: "\n")
  }
}

extension StreamFaultKinds {
  /// Fault, its fields, how `failclosed mock-tor --fault HOST=SPEC` spells it, what it does.
  public static func guideTable(of kinds: [StreamFaultKind] = all) -> String {
    var lines = ["| fault | fields | mock spelling | what |", "|---|---|---|---|"]
    for kind in kinds {
      let fields = kind.parameters.map(cell).joined(separator: "; ")
      let spelling = kind.toxics.map(spelling).joined(separator: ",")
      lines.append("| `\(kind.name)` | \(fields) | `\(spelling)` | \(kind.summary) |")
    }
    return lines.joined(separator: "\n")
  }

  private static func cell(_ parameter: StreamFaultParameter) -> String {
    let ranges = parameter.ranges.map { "\($0.lowerBound) to \($0.upperBound)" }
      .joined(separator: " or ")
    let fallback = parameter.defaultValue.map { " (default \($0))" } ?? ""
    return "`\(parameter.field)`: \(parameter.meaning), \(ranges)\(fallback)"
  }

  /// "latency=ms", "reply=0x(reply in hex)": the toxic with the field its value comes from.
  private static func spelling(_ toxic: ToxicSpelling) -> String {
    guard let field = toxic.valueField else { return toxic.toxic }
    return toxic.toxic + "=" + (toxic.notation == .hexadecimal ? "0x(\(field) in hex)" : field)
  }
}
