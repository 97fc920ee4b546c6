import TorControl

extension ScenarioExpectation {
  /// Real-Tor lane, a replayed measurement: tor's furthest bootstrap step is exactly this
  /// progress and tag (`measured`: what the measurement recorded, for the report). Measured
  /// against reproduced, both in the reason, so a mismatch says what the sandbox did instead.
  public struct BootstrapStopsAt: ExpectationUnit {
    public static let name = "bootstrap-stops-at"
    public static let fields = ["progress", "tag", "measured"]
    public static let realTorOnly = true
    public var progress: Int
    public var tag: String
    public var measured: String?

    public init(progress: Int, tag: String, measured: String?) {
      self.progress = progress
      self.tag = tag
      self.measured = measured
    }

    public static func parse(_ input: ExpectationInput) throws(ScenarioError) -> Self {
      let r = input.reader
      return Self(
        progress: try r.integer("progress", in: 0...100, "a bootstrap percentage", required: true)!,
        tag: try r.oneOf("tag", BootstrapPhase.all.map(\.tag))!,
        measured: try r.string("measured", required: false))
    }

    public func judge(_ facts: ExpectationFacts) -> ExpectationCheck {
      let today = "\(progress)% \(tag)"
      let wanted =
        measured.map { $0 == today || $0.hasPrefix(today + ",") ? $0 : "\($0) = \(today)" }
        ?? today
      guard let furthest = facts.torTimeline.furthestBootstrap else {
        return (.failed, "measured \(wanted), reproduced nothing: tor reported no bootstrap step")
      }
      let got = "\(furthest.progress ?? 0)% \(furthest.tag ?? "(no tag)")"
      if furthest.progress == progress, furthest.tag == tag {
        return (.met, "measured \(wanted), reproduced \(got)")
      }
      return (.failed, "measured \(wanted), reproduced \(got)")
    }

    public var sentence: String {
      "tor's bootstrap stops at \(progress)% (\(tag))"
        + (measured.map { " as measured: \($0)" } ?? "")
    }
  }
}
