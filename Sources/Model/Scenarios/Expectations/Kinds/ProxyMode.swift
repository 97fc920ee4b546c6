extension ScenarioExpectation {
  /// The proxy mode in force at a virtual time.
  public struct ProxyMode: ExpectationUnit {
    public static let name = "proxy-mode"
    public static let fields = ["mode", "at"]
    public var mode: Transport
    public var at: Double

    public init(_ mode: Transport, at: Double) {
      self.mode = mode
      self.at = at
    }

    public static func parse(_ input: ExpectationInput) throws(ScenarioError) -> Self {
      Self(
        Transport(rawValue: try input.reader.oneOf("mode", Transport.allCases.map(\.rawValue))!)!,
        at: try input.time("at", required: true)!)
    }

    public func judge(_ facts: ExpectationFacts) -> ExpectationCheck {
      guard
        let last = facts.events.last(where: {
          $0.name == ScenarioEventKind.proxyMode.name && $0.time <= at
        })
      else { return (.failed, "no proxy mode was set by \(facts.seconds(at))") }
      let actual: Transport = last.fields["useTor"] == "true" ? .tor : .direct
      if actual != mode {
        return (.failed, "proxy mode was \(actual.rawValue) (set at \(facts.seconds(last.time)))")
      }
      return (.met, "proxy mode \(actual.rawValue) since \(facts.seconds(last.time))")
    }

    public var sentence: String { "proxy mode \(mode.rawValue) at \(formatSeconds(at))" }
  }
}
