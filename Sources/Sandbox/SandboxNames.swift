import Foundation

/// The names one run gives to what it creates, all derived from a unique prefix
/// `fc-<6 hex>` so a reaper can recognise leftovers and their owner.
public struct SandboxNames: Sendable, Hashable {
  /// Every name the harness creates starts with this.
  public static let harnessPrefix = "fc-"
  /// Where owner PIDs are recorded, one file per run: `<prefix>.pid`.
  public static let runDirectory = "/run/failclosed"

  public let prefix: String

  public init(prefix: String) { self.prefix = prefix }

  /// A fresh prefix: `fc-` and 6 random hex digits.
  public static func random() -> SandboxNames {
    let hex = String(format: "%06x", UInt32.random(in: 0..<0x100_0000))
    return SandboxNames(prefix: harnessPrefix + hex)
  }

  /// The run's prefix when `name` is one of the harness's names (a namespace, a veth, an nft
  /// table or a pid file), else nil.
  public static func runPrefix(of name: String) -> String? {
    let normalized = name.replacingOccurrences(of: "_", with: "-")
    guard normalized.hasPrefix(harnessPrefix) else { return nil }
    let hex = normalized.dropFirst(harnessPrefix.count).prefix(6)
    guard hex.count == 6, hex.allSatisfy({ $0.isHexDigit && !$0.isUppercase }) else { return nil }
    let rest = normalized.dropFirst(harnessPrefix.count + 6)
    guard rest.isEmpty || rest.hasPrefix("-") || rest.hasPrefix(".") else { return nil }
    return harnessPrefix + hex
  }

  public var device: String { prefix + "-dev" }
  public var censor: String { prefix + "-cen" }
  public var world: String { prefix + "-wld" }
  public var namespaces: [String] { [device, censor, world] }
  /// The nftables table in the censor namespace (nft names take no hyphen).
  public var nftTable: String { prefix.replacingOccurrences(of: "-", with: "_") }
  /// Read by `ip netns exec`, which bind-mounts it over /etc/resolv.conf.
  public var resolvConfDirectory: String { "/etc/netns/" + device }
  public var pidFile: String { SandboxNames.runDirectory + "/" + prefix + ".pid" }
}
