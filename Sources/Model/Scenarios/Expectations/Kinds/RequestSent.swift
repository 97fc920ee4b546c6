extension ScenarioExpectation {
  /// A request went out over this transport by a time: an HTTP request started on the
  /// transport (a directory fetch, a page load, a held URL once it loads) or a relay
  /// connection opened on it (WebSocket).
  public struct RequestSent: ExpectationUnit {
    public static let name = "request-sent"
    public static let fields = ["transport", "by"]
    public var transport: Transport
    public var by: Double

    public init(transport: Transport, by: Double) {
      self.transport = transport
      self.by = by
    }

    public static func parse(_ input: ExpectationInput) throws(ScenarioError) -> Self {
      Self(
        transport: Transport(
          rawValue: try input.reader.oneOf("transport", Transport.allCases.map(\.rawValue))!)!,
        by: try input.time("by", required: true)!)
    }

    public func judge(_ facts: ExpectationFacts) -> ExpectationCheck {
      let sent = facts.events.filter {
        $0.fields["transport"] == transport.rawValue
          && ($0.name == ScenarioEventKind.requestSent.name
            || ($0.name == ScenarioEventKind.socketOpened.name && $0.fields["purpose"] == "relay"))
      }
      func what(_ event: ScenarioEvent) -> String {
        event.name == ScenarioEventKind.requestSent.name
          ? "HTTP request \(event.fields["url"] ?? "")"
          : "relay connection to \(event.fields["target"] ?? "")"
      }
      guard let first = sent.first else {
        return (
          .failed,
          "no HTTP request and no relay connection went out via \(transport.rawValue)"
        )
      }
      if first.time > facts.deadline(by) {
        return (
          .failed,
          "the first request via \(transport.rawValue) was at \(facts.seconds(first.time)) "
            + "(\(what(first))), after \(facts.seconds(by))" + facts.driftNote(by)
        )
      }
      return (.met, "\(what(first)) via \(transport.rawValue) at \(facts.seconds(first.time))")
    }

    public var sentence: String {
      "an HTTP request or relay connection via \(transport.rawValue) by \(formatSeconds(by))"
    }
  }
}
