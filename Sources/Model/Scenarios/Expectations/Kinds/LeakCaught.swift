import Audit

extension ScenarioExpectation {
  /// A canary: a leak of each of these classes must be caught.
  public struct LeakCaught: ExpectationUnit {
    public static let name = "leak-caught"
    public static let fields = ["classes"]
    public var classes: [LeakClass]

    public init(classes: [LeakClass]) { self.classes = classes }

    public static func parse(_ input: ExpectationInput) throws(ScenarioError) -> Self {
      var classes: [LeakClass] = []
      for e in try input.reader.array("classes", required: true, minCount: 1, "leak classes")! {
        guard case .string(let s) = e.value, let c = LeakClass(rawValue: s) else {
          let names = LeakClass.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
          throw ScenarioError(
            file: input.file, path: e.path,
            message: "expected a leak class (one of \(names)), got \(e.value.shortDescription)")
        }
        if classes.contains(c) {
          throw ScenarioError(file: input.file, path: e.path, message: "\"\(s)\" is listed twice")
        }
        classes.append(c)
      }
      return Self(classes: classes)
    }

    public func judge(_ facts: ExpectationFacts) -> ExpectationCheck {
      let all = facts.outcome.audit.leaks
      let missing = classes.filter { c in !all.contains { $0.leakClass == c } }
      if missing.isEmpty {
        let evidence = classes.compactMap { c in all.first { $0.leakClass == c } }
        return (.met, "caught: " + evidence.map(ExpectationJudge.describe).joined(separator: "; "))
      }
      let names = missing.map(\.rawValue).joined(separator: ", ")
      if facts.captureInconclusive { return facts.undecided("no \(names) leak seen") }
      return (.failed, "no \(names) leak caught: the detector did not fire")
    }

    public var sentence: String {
      "a \(classes.map(\.rawValue).joined(separator: ", ")) leak is caught"
    }
  }
}
