import Foundation

/// The names one run gives to what it creates, all derived from a unique prefix
/// `fc-<6 hex>` so a reaper can recognise leftovers and their owner.
public struct SandboxNames: Sendable, Hashable {
  /// Every name the harness creates starts with this.
  public static let harnessPrefix = "fc-"
  /// Where owner PIDs are recorded, one file per run: `<prefix>.pid`.
  public static let runDirectory = "/run/failclosed"

  public let prefix: String
  /// A further device and censor pair of the run, sharing its world (nil: the run's own
  /// pair). Slots run scenarios side by side on one world; see ``SandboxRun/createSlot(_:)``.
  public let slot: Int?

  public init(prefix: String, slot: Int? = nil) {
    self.prefix = prefix
    self.slot = slot
  }

  /// The names of slot `index` (1 and up) of this run: `<prefix>-s<index>-dev`, `-cen`.
  public func slot(_ index: Int) -> SandboxNames { SandboxNames(prefix: prefix, slot: index) }

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

  /// The prefix and the slot: what the device's and censor's names start with.
  var pairPrefix: String { prefix + (slot.map { "-s\($0)" } ?? "") }
  public var device: String { pairPrefix + "-dev" }
  public var censor: String { pairPrefix + "-cen" }
  public var world: String { prefix + "-wld" }
  /// The namespaces this run creates (a slot creates its pair; the world is the run's).
  public var namespaces: [String] { slot == nil ? [device, censor, world] : [device, censor] }
  /// The nftables table in the censor namespace (nft names take no hyphen).
  public var nftTable: String { pairPrefix.replacingOccurrences(of: "-", with: "_") }
  /// A slot censor's table that hides the device behind the censor's world-side address.
  public var masqueradeTable: String { nftTable + "_nat" }
  /// The world's end of the censor's link: eth0, or eth<slot> for a slot.
  public var worldLink: String { "eth\(slot ?? 0)" }
  /// Read by `ip netns exec`, which bind-mounts it over /etc/resolv.conf.
  public var resolvConfDirectory: String { "/etc/netns/" + device }
  public var pidFile: String { SandboxNames.runDirectory + "/" + prefix + ".pid" }
}
