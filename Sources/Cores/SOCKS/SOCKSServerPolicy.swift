/// What a SOCKS server accepts. The two presets mirror the mock's personalities.
public struct SOCKSServerPolicy: Sendable, Equatable {
  /// Offer RFC 1929 username/password (Tor prefers it when the client offers both, since the
  /// credentials carry stream isolation).
  public var acceptsUsernamePassword: Bool
  public var acceptsSOCKS4: Bool
  public var allowedCommands: Set<SOCKSCommand>
  /// The SOCKS5 reply for a recognised command that is not allowed.
  public var disallowedCommandReply: SOCKSReplyCode
  /// Accept `<torS0X>1` RPC-object usernames (Arti's RPC; C tor built without RPC rejects).
  public var acceptsRPCIsolation: Bool

  public init(
    acceptsUsernamePassword: Bool, acceptsSOCKS4: Bool, allowedCommands: Set<SOCKSCommand>,
    disallowedCommandReply: SOCKSReplyCode, acceptsRPCIsolation: Bool
  ) {
    self.acceptsUsernamePassword = acceptsUsernamePassword
    self.acceptsSOCKS4 = acceptsSOCKS4
    self.allowedCommands = allowedCommands
    self.disallowedCommandReply = disallowedCommandReply
    self.acceptsRPCIsolation = acceptsRPCIsolation
  }

  /// C tor 0.4.9: SOCKS4/4a/5, no-auth and username/password, CONNECT, RESOLVE, RESOLVE_PTR;
  /// BIND and UDP ASSOCIATE get 0x07.
  public static let tor = SOCKSServerPolicy(
    acceptsUsernamePassword: true, acceptsSOCKS4: true,
    allowedCommands: [.connect, .resolve, .resolvePTR],
    disallowedCommandReply: .commandNotSupported,
    acceptsRPCIsolation: false)

  /// bitchat's in-process Arti as the seeds describe it: SOCKS5 no-auth only, CONNECT only,
  /// anything else 0x01.
  public static let arti = SOCKSServerPolicy(
    acceptsUsernamePassword: false, acceptsSOCKS4: false, allowedCommands: [.connect],
    disallowedCommandReply: .generalFailure, acceptsRPCIsolation: true)
}
