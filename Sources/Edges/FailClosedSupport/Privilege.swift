import Foundation

/// Whether this process may create namespaces and open captures, and whether a missing
/// privilege may be tolerated (locally) or must fail (in CI, where everything runs as root).
public enum Privilege {
  public static var isRoot: Bool { geteuid() == 0 }

  /// True when running under CI (`CI` set to anything but empty, "0" or "false").
  public static var isCI: Bool {
    let value = ProcessInfo.processInfo.environment["CI"] ?? ""
    return !(value.isEmpty || value == "0" || value.lowercased() == "false")
  }

  /// Why a root-only test cannot run here, or nil when it can. In CI a missing privilege is
  /// not a reason to skip: the caller must run the test and let it fail.
  public static var rootSkipReason: String? {
    if isRoot || isCI { return nil }
    return "needs root (network namespaces, nftables, libpcap capture); run as root or in CI"
  }

  /// Why a test that needs a tool or file cannot run here, or nil when it can: `available`
  /// says whether it is here. In CI a missing tool is not a reason to skip: the test runs and
  /// fails (its `#require`).
  public static func skipReason(unless available: Bool, _ reason: String) -> String? {
    available || isCI ? nil : reason
  }
}
