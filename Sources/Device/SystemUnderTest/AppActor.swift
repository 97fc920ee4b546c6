/// The serial executor of the modelled app, standing in for bitchat's `@MainActor`: TorManager,
/// NetworkActivationService, TorURLSession, GeoRelayDirectory and NostrRelayManager are isolated
/// to it, so their calls into each other are synchronous and happen in bitchat's order, while
/// detached loops (probe, bootstrap poll, waits) hop onto it the way bitchat's hop onto the main
/// actor.
@globalActor public actor AppActor {
  public static let shared = AppActor()
}
