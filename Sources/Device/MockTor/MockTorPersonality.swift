import SOCKS

/// Which Tor client the mock imitates (see DESIGN.md, "the two personalities").
public enum MockTorPersonality: String, Sendable, CaseIterable {
  /// bitchat's in-process Arti: SOCKS binds only once bootstrapped; no-auth, CONNECT only.
  case arti
  /// C tor as Onion Browser drives it: SOCKS from the start, isolation credentials,
  /// RESOLVE/RESOLVE_PTR, tor's reply codes, streams wait for the bootstrap.
  case ctor

  public var socksPolicy: SOCKSServerPolicy { self == .arti ? .arti : .tor }
}
