import TorControl

extension ScenarioExpectation {
  /// Real-Tor lane: tor's bootstrap never passed `atMost`; with `tag`, tor's furthest phase
  /// carried that tag (conn, conn_done, conn_pt ...). An empty timeline never passes: silence
  /// is not evidence.
  public struct BootstrapStuck: ExpectationUnit {
    public static let name = "bootstrap-stuck"
    public static let fields = ["atMost", "tag"]
    public static let realTorOnly = true
    public var atMost: Int
    public var tag: String?

    public init(atMost: Int, tag: String?) {
      self.atMost = atMost
      self.tag = tag
    }

    public static func parse(_ input: ExpectationInput) throws(ScenarioError) -> Self {
      Self(
        atMost: try input.reader.integer(
          "atMost", in: 0...100, "a bootstrap percentage", required: true)!,
        tag: try input.reader.oneOf("tag", BootstrapPhase.all.map(\.tag), required: false))
    }

    public func judge(_ facts: ExpectationFacts) -> ExpectationCheck {
      guard let furthest = facts.torTimeline.furthestBootstrap else {
        return (.failed, "tor reported no bootstrap step: nothing shows where it stalled")
      }
      if furthest.progress! > atMost {
        return (
          .failed, "tor reached " + facts.describe(furthest) + ", expected at most \(atMost)%"
        )
      }
      if let tag, furthest.tag != tag {
        return (
          .failed, "tor's furthest phase was " + facts.describe(furthest) + ", expected \(tag)"
        )
      }
      return (.met, "stuck at " + facts.describe(furthest))
    }

    public var sentence: String {
      "tor stays at \(atMost)% or below" + (tag.map { " (\($0))" } ?? "")
    }
  }
}
