extension ScenarioExpectation {
  /// A notification was posted by a virtual time; with `count`, exactly that many times.
  public struct Notification: ExpectationUnit {
    public static let name = "notification"
    public static let fields = ["name", "by", "count"]
    public var name: String
    public var by: Double
    public var count: Int?

    public init(name: String, by: Double, count: Int?) {
      self.name = name
      self.by = by
      self.count = count
    }

    public static func parse(_ input: ExpectationInput) throws(ScenarioError) -> Self {
      Self(
        name: try input.reader.oneOf("name", ScenarioParser.notificationNames)!,
        by: try input.time("by", required: true)!,
        count: try input.reader.integer("count", in: 0...1000, "a number of times"))
    }

    public func judge(_ facts: ExpectationFacts) -> ExpectationCheck {
      let times = facts.events.filter { $0.name == name }.map(\.time)
      guard let first = times.first else { return (.failed, "\(name) was never posted") }
      if first > facts.deadline(by) {
        return (
          .failed,
          "\(name) first posted at \(facts.seconds(first)), after \(facts.seconds(by))"
            + facts.driftNote(by)
        )
      }
      if let count, times.count != count {
        let list = times.map(facts.seconds).joined(separator: ", ")
        return (.failed, "\(name) posted \(times.count) times (at \(list)), expected \(count)")
      }
      return (
        .met, "\(name) posted at \(facts.seconds(first))" + (first > by ? facts.driftNote(by) : "")
      )
    }

    public var sentence: String {
      let times = count.map { " exactly \($0) time\($0 == 1 ? "" : "s")" } ?? ""
      return "\(name) posted\(times) by \(formatSeconds(by))"
    }
  }
}
