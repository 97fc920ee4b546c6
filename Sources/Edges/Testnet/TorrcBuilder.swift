import TorControl

/// Writes the torrc of every node and of clients, from reference/private-tor-net.md. Pure:
/// inputs are the plan, the authorities' identities and the directories; output is text.
public struct TorrcBuilder: Sendable {
  /// What a client needs to find the network: one `DirAuthority` line per authority.
  public struct AuthorityIdentity: Sendable, Equatable, Codable {
    public let node: TestnetNode
    /// The v3 identity (the `fingerprint` line of authority_certificate).
    public let v3Identity: String
    /// The relay identity fingerprint (the SHA-1 of its RSA identity key, as tor prints it).
    public let fingerprint: String

    public init(node: TestnetNode, v3Identity: String, fingerprint: String) {
      self.node = node
      self.v3Identity = v3Identity
      self.fingerprint = fingerprint
    }

    public var dirAuthorityLine: String {
      "DirAuthority \(node.name) orport=\(node.orPort) no-v2 v3ident=\(v3Identity) "
        + "\(node.address):\(node.dirPort ?? 0) \(fingerprint)"
    }
  }

  public let authorities: [AuthorityIdentity]

  public init(authorities: [AuthorityIdentity]) { self.authorities = authorities }

  /// Options every node and client of a testing network shares.
  public var common: [String] {
    [
      "TestingTorNetwork 1",
      "PathsNeededToBuildCircuits 0.67",
      "TestingDirAuthVoteExit *",
      "TestingDirAuthVoteHSDir *",
      "TestingDirAuthVoteGuard *",
      "TestingMinExitFlagThreshold 0",
      "V3AuthNIntervalsValid 2",
      "RunAsDaemon 0",
      "ShutdownWaitLength 0",
      "SafeLogging 0",
      "Sandbox 0",
    ] + authorities.map(\.dirAuthorityLine)
  }

  /// The torrc of one node of the network. An authority's first voting round is placed on the
  /// wall clock by `firstRound` (chosen at launch); without it, on tor's grid from midnight.
  /// With `owner`, tor exits once that process has (it looks every 15 s; ``TorOwnership``).
  public func node(
    _ node: TestnetNode, dataDirectory: String, firstRound: FirstVotingRound? = nil,
    owner: Int32? = nil
  ) -> String {
    var lines = [
      "DataDirectory \(dataDirectory)",
      "Nickname \(node.name)",
      "Address \(node.address)",
      "ORPort \(node.address):\(node.orPort)",
      "SocksPort 0",
      "ControlPort \(node.address):\(node.controlPort)",
      "CookieAuthentication 0",
      "Log notice file \(dataDirectory)/notice.log",
      "ContactInfo failclosed-testnet",
      "AssumeReachable 1",
      "ServerDNSDetectHijacking 0",
      "ServerDNSTestAddresses",
      "ServerDNSResolvConfFile /dev/null",
    ]
    switch node.role {
    case .authority:
      lines += [
        "DirPort \(node.address):\(node.dirPort ?? 9030)",
        "AuthoritativeDirectory 1",
        "V3AuthoritativeDirectory 1",
        "ExitRelay 0",
        "ExitPolicy reject *:*",
        "TestingV3AuthInitialVotingInterval \(FirstVotingRound.interval)",
        "TestingV3AuthInitialVoteDelay 2",
        "TestingV3AuthInitialDistDelay 2",
        // tor's floor: vote and distribution delays of at least 2 s each, under half the interval.
        "V3AuthVotingInterval 10",
        "V3AuthVoteDelay 2",
        "V3AuthDistDelay 2",
      ]
      if let firstRound { lines.append("TestingV3AuthVotingStartOffset \(firstRound.offset)") }
    case .exit:
      // A private-only exit policy becomes "reject 1-65535" in microdescriptors: no exits.
      lines += [
        "ExitRelay 1", "RefuseUnknownExits 0", "ExitPolicyRejectPrivate 0",
        "ExitPolicy accept *:*", "DirCache 0",
      ]
    case .middle:
      lines += ["ExitRelay 0", "ExitPolicy reject *:*", "DirCache 0"]
    case .bridge:
      lines += [
        "BridgeRelay 1",
        "PublishServerDescriptor 0",
        "ExitRelay 0",
        "ExitPolicy reject *:*",
        "ServerTransportPlugin obfs4 exec /usr/bin/obfs4proxy",
        "ServerTransportListenAddr obfs4 \(node.address):\(node.obfs4Port ?? 4433)",
        "ExtORPort auto",
      ]
    }
    if let owner { lines.append("__OwningControllerProcess \(owner)") }
    return (lines + common).joined(separator: "\n") + "\n"
  }

  /// The network's settings a client needs and nothing of its own: the base file an app's tor
  /// starts from (`failclosed app --backend tor --torrc-base FILE`).
  public var clientBase: String { common.joined(separator: "\n") + "\n" }

  /// The torrc of a client of this network: SOCKS and a cookie-authenticated control port on
  /// loopback, optionally only through bridges.
  public func client(
    dataDirectory: String, socksPort: UInt16 = 39050, controlPort: UInt16 = 39051,
    bridges: [BridgeLine] = [], disableNetwork: Bool = false
  ) -> String {
    let own = ClientTorrc.options(
      dataDirectory: dataDirectory, logDirectory: dataDirectory, socksPort: socksPort,
      controlPort: controlPort, bridges: bridges, disableNetwork: disableNetwork)
    return (own + common).joined(separator: "\n") + "\n"
  }
}
