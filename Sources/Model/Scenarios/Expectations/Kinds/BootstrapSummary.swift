extension ScenarioExpectation {
  /// The bootstrap summary at a time (nil: at the end of the run).
  public struct BootstrapSummary: ExpectationUnit {
    public static let name = "bootstrap-summary"
    public static let fields = ["text", "match", "at"]
    public var text: String
    public var match: TextMatch
    public var at: Double?

    public init(text: String, match: TextMatch, at: Double?) {
      self.text = text
      self.match = match
      self.at = at
    }

    public static func parse(_ input: ExpectationInput) throws(ScenarioError) -> Self {
      let r = input.reader
      guard let textValue = r.value("text") else {
        throw r.fail(nil, "missing \"text\": expected a string")
      }
      guard case .string(let text) = textValue else {
        throw r.fail("text", "expected a string, got \(textValue.shortDescription)")
      }
      let match =
        try r.oneOf("match", TextMatch.allCases.map(\.rawValue), required: false)
        .map { TextMatch(rawValue: $0)! } ?? .equals
      return Self(text: text, match: match, at: try input.time("at"))
    }

    public func judge(_ facts: ExpectationFacts) -> ExpectationCheck {
      let samples = facts.outcome.bootstrap.filter { at == nil || $0.time <= at! }
      guard let sample = samples.last else {
        return (
          .failed, "no bootstrap state was read" + (at.map { " by \(facts.seconds($0))" } ?? "")
        )
      }
      let ok = match == .equals ? sample.summary == text : sample.summary.contains(text)
      let described =
        "summary \"\(sample.summary)\" (\(sample.progress)%) at \(facts.seconds(sample.time))"
      return (ok ? .met : .failed, described)
    }

    public var sentence: String {
      let when = at.map { "at \(formatSeconds($0))" } ?? "at the end"
      return "bootstrap summary \(match == .equals ? "is" : "contains") \"\(text)\" \(when)"
    }
  }
}
