/// The declarations of bitchat's that the driver (BitchatShims/Driver) uses only where a commit
/// has them: each becomes a compiler flag when the checkout declares it, and the driver's use of
/// it sits under `#if FLAG`. Found by name in the checkout (the app's members as
/// SwiftSourceOutline reads them), so a commit before a declaration existed still builds, and
/// the report says what the commit lacked (a missing notification is then an unmet expectation,
/// not a build failure).
public struct BitchatDriverFeature: Sendable, Equatable {
  public let flag: String
  /// The type whose body or extension declares `member`; nil for a top-level declaration.
  public let type: String?
  public let member: String

  /// Whether a file's outline declares it.
  func isDeclared(by outline: SwiftSourceOutline) -> Bool {
    guard let type else { return outline.types.contains(member) || outline.values.contains(member) }
    return outline.typeMembers[type]?.contains(member) == true
      || outline.extensionMembers[type]?.contains(member) == true
  }
}

public enum BitchatDriverFeatures {
  public static let all: [BitchatDriverFeature] = [
    .init(flag: "BITCHAT_HAS_RELAY_SETTINGS", type: nil, member: "NostrRelaySettings"),
    .init(
      flag: "BITCHAT_HAS_REACHABILITY_MONITOR", type: nil, member: "NetworkReachabilityMonitor"),
    .init(flag: "BITCHAT_HAS_BOOTSTRAP_STALL", type: "TorManager", member: "bootstrapDidStall"),
    .init(flag: "BITCHAT_HAS_STALL_NOTIFICATION", type: "Name", member: "TorBootstrapDidStall"),
    .init(
      flag: "BITCHAT_HAS_RELAY_DIRECTORY_REFRESH", type: "Name",
      member: "geoRelayDirectoryDidRefresh"),
    .init(
      flag: "BITCHAT_HAS_NETWORK_REACHABLE", type: "NetworkActivationService",
      member: "isNetworkReachable"),
  ]

  /// The flags of the features some file of `index` declares.
  public static func flags(in index: BitchatCheckoutIndex) -> [String] {
    all.filter { feature in index.files.values.contains { feature.isDeclared(by: $0.outline) } }
      .map(\.flag)
  }
}
