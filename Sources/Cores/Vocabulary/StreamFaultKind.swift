/// One kind of stream fault a scenario's `tor.faults` may name, whole: its name, its fields
/// and how the mock Tor's `--fault HOST=SPEC` spells it (toxiproxy's vocabulary). Every kind is
/// listed once, in ``StreamFaultKinds/all``: the scenario parser, the runner's mock command
/// line, the schema and the guide read that list, so a kind is accepted everywhere or nowhere.
public struct StreamFaultKind: Sendable, Hashable {
  /// Its name in a scenario file's `fault` field.
  public let name: String
  /// What it does, in a line (the guide).
  public let summary: String
  public let parameters: [StreamFaultParameter]
  /// The mock's toxics it is written as, in order (several are joined with ",").
  public let toxics: [ToxicSpelling]

  public init(
    _ name: String, _ summary: String, parameters: [StreamFaultParameter] = [],
    mock toxics: [ToxicSpelling]
  ) {
    self.name = name
    self.summary = summary
    self.parameters = parameters
    self.toxics = toxics
  }

  public func parameter(named field: String) -> StreamFaultParameter? {
    parameters.first { $0.field == field }
  }

  /// `written` with the defaults of the optional fields left out, and only the kind's fields.
  public func completed(_ written: [String: Int]) -> [String: Int] {
    var values: [String: Int] = [:]
    for parameter in parameters {
      values[parameter.field] = written[parameter.field] ?? parameter.defaultValue
    }
    return values
  }

  /// The mock's SPEC for these values: "reset_after=0", "reply=0xf2", "latency=200".
  public func mockSpec(_ values: [String: Int]) -> String {
    let values = completed(values)
    return toxics.map { $0.spec(values) }.joined(separator: ",")
  }
}
