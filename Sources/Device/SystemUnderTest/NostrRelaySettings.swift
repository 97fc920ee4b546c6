/// Relays added by hand (bitchat's NostrRelaySettings): stored normalised under
/// "nostr.customRelays", at most 8, .onion accepted. In the hardened profile an .onion relay
/// is refused when the Tor client cannot reach onion services (weakness 3).
public struct NostrRelaySettings: Sendable {
  public static let maxCustomRelays = 8
  public static let storageKey = "nostr.customRelays"
  public static let builtInRelays = [
    "wss://relay.damus.io", "wss://nos.lol", "wss://relay.primal.net", "wss://offchain.pub",
  ]

  public enum AddFailure: Error, Equatable, Sendable, CustomStringConvertible {
    case malformed
    case alreadyPresent
    case limitReached
    /// Hardened only: the Tor client has no onion-service support.
    case onionUnsupported

    public var description: String {
      switch self {
      case .malformed: return "malformed"
      case .alreadyPresent: return "alreadyPresent"
      case .limitReached: return "limitReached"
      case .onionUnsupported: return "onionUnsupported"
      }
    }
  }

  public let store: KeyValueStore
  public let profile: SUTProfile
  public let torSupportsOnionServices: Bool

  public init(store: KeyValueStore, profile: SUTProfile = .bitchat, torSupportsOnionServices: Bool)
  {
    self.store = store
    self.profile = profile
    self.torSupportsOnionServices = torSupportsOnionServices
  }

  /// Normalised relay URLs in the order added; re-normalised and de-duplicated on read.
  public func customRelays() -> [String] {
    let stored = store.stringArray(forKey: Self.storageKey) ?? []
    var seen = Set<String>()
    return stored.compactMap { NostrRelayURL.normalized($0) }.filter { seen.insert($0).inserted }
  }

  @discardableResult
  public func add(_ rawValue: String, builtIn: Set<String> = Set(builtInRelays)) -> Result<
    String, AddFailure
  > {
    guard let normalized = NostrRelayURL.normalized(rawValue, defaultScheme: "wss") else {
      return .failure(.malformed)
    }
    var current = customRelays()
    guard !current.contains(normalized), !builtIn.contains(normalized) else {
      return .failure(.alreadyPresent)
    }
    guard current.count < Self.maxCustomRelays else { return .failure(.limitReached) }
    if profile.rejectsUnreachableOnionRelays, NostrRelayURL.isOnion(normalized),
      !torSupportsOnionServices
    {
      return .failure(.onionUnsupported)
    }
    current.append(normalized)
    store.set(current, forKey: Self.storageKey)
    return .success(normalized)
  }

  public func remove(_ url: String) {
    guard let normalized = NostrRelayURL.normalized(url, defaultScheme: "wss") else { return }
    store.set(customRelays().filter { $0 != normalized }, forKey: Self.storageKey)
  }
}
