/// Which rules the modelled app follows. `bitchat` is faithful to bitchat @9b84b36, weaknesses
/// included; `hardened` changes one rule per known weakness (docs/weaknesses.md).
public struct SUTProfile: Sendable, Equatable {
  public let name: String
  /// Weakness 1: how long the SOCKS probe keeps trying. bitchat 60 s, shorter than the 75 s
  /// bootstrap deadline; hardened 75 s, so a bootstrap finishing in 60-75 s still ends ready.
  public let socksProbeTimeout: Double
  /// Weakness 2: whether GeoRelayDirectory requires activation (and, with the preference on,
  /// the Tor proxy mode) before it fetches. bitchat: no.
  public let directoryGatedByActivation: Bool
  /// Weakness 3: whether relay settings refuse .onion addresses the Tor backend cannot reach
  /// (Arti is built without onion-service client support). bitchat: accepts them.
  public let rejectsUnreachableOnionRelays: Bool
  /// Weakness 4: whether TorURLSession.rebuild() cancels the old sessions' tasks. bitchat: no.
  public let rebuildCancelsOldTasks: Bool
  /// bitchat's largest known gap: no bridges or pluggable transports. Whether configured
  /// bridge lines reach the Tor client. bitchat: ignored; hardened: used, bridges only.
  public let usesBridges: Bool

  public static let bitchat = SUTProfile(
    name: "bitchat", socksProbeTimeout: 60.0, directoryGatedByActivation: false,
    rejectsUnreachableOnionRelays: false, rebuildCancelsOldTasks: false, usesBridges: false)

  public static let hardened = SUTProfile(
    name: "hardened", socksProbeTimeout: 75.0, directoryGatedByActivation: true,
    rejectsUnreachableOnionRelays: true, rebuildCancelsOldTasks: true, usesBridges: true)

  public init(
    name: String, socksProbeTimeout: Double, directoryGatedByActivation: Bool,
    rejectsUnreachableOnionRelays: Bool, rebuildCancelsOldTasks: Bool, usesBridges: Bool = false
  ) {
    self.name = name
    self.socksProbeTimeout = socksProbeTimeout
    self.directoryGatedByActivation = directoryGatedByActivation
    self.rejectsUnreachableOnionRelays = rejectsUnreachableOnionRelays
    self.rebuildCancelsOldTasks = rebuildCancelsOldTasks
    self.usesBridges = usesBridges
  }
}
