import FailClosedSupport
import Testing

/// Traits for tests that need something of the host (root, a tool, the built binary). Locally a
/// test without it is skipped, and the skip says why; in CI (`CI=1`, where everything is
/// installed and runs as root) it is never skipped: it runs and fails on what is missing. The
/// rule itself is ``Privilege``'s.
extension Trait where Self == ConditionTrait {
  /// Root: network namespaces, nftables, libpcap capture.
  public static var needsRoot: Self { .enabled(if: Privilege.rootSkipReason == nil, "needs root") }

  /// Root, for the reason given ("mounts a tmpfs").
  public static func needsRoot(
    because reason: String, sourceLocation: SourceLocation = #_sourceLocation
  ) -> Self {
    .enabled(
      if: Privilege.rootSkipReason == nil, Comment(rawValue: "needs root (\(reason))"),
      sourceLocation: sourceLocation)
  }

  /// The built `failclosed` (``FailclosedBinary``).
  public static var needsFailclosedBinary: Self {
    needs(FailclosedBinary.missing, if: FailclosedBinary.built != nil)
  }

  /// What `requirement` names ("needs /usr/bin/tor"), here when `available` holds.
  public static func needs(
    _ requirement: String, if available: @autoclosure @escaping @Sendable () -> Bool,
    sourceLocation: SourceLocation = #_sourceLocation
  ) -> Self {
    .enabled(
      if: Privilege.skipReason(unless: available(), requirement) == nil,
      Comment(rawValue: requirement), sourceLocation: sourceLocation)
  }
}
