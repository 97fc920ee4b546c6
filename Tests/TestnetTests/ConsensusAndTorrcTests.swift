import Testing
import TorControl

@testable import Testnet

@Suite struct ConsensusAndTorrcTests {
  @Test func consensusRoutersBecomeTheAllowlist() throws {
    let text = """
      network-status-version 3 microdesc
      r middle1 Xl6tMEvTPqJ3dngcBNYrKgv/WD0 orNFq7vAyFoXMkpGAs+U1loJh3Q 2026-11-29 14:04:28 127.0.0.1 7021 0
      s Fast Guard Running Stable Valid
      r auth1 hxGVjAXOymotuw6CkL0fP0gMryQ ZNETBsBN5r6qqrskuuKtVGiGxzA 2026-11-29 14:04:28 10.66.1.2 9001 9030
      s Authority Exit Fast Running V2Dir Valid
      """
    let consensus = try Consensus(text: text)
    #expect(consensus.routers.map(\.nickname) == ["middle1", "auth1"])
    #expect(consensus.routers[1].flags.contains("Authority"))
    #expect(consensus.endpoints == ["127.0.0.1:7021", "10.66.1.2:9001", "10.66.1.2:9030"])
  }

  @Test func theMicrodescFlavourAndItsALinesGiveTheSameEndpoints() throws {
    // cached-microdesc-consensus: no descriptor digest in r lines; a lines add ORPorts.
    let text = """
      network-status-version 3 microdesc
      r exit1 Xl6tMEvTPqJ3dngcBNYrKgv/WD0 2026-11-29 14:04:28 10.66.1.104 7004 0
      a [fd66:0:0:2::104]:7004
      m sha256digest
      s Exit Fast Running Valid
      r auth1 hxGVjAXOymotuw6CkL0fP0gMryQ 2026-11-29 14:04:28 10.66.1.101 7001 7101
      s Authority Fast Running V2Dir Valid
      """
    let consensus = try Consensus(text: text)
    #expect(consensus.routers.map(\.nickname) == ["exit1", "auth1"])
    #expect(consensus.routers[0].flags.contains("Exit"))
    #expect(consensus.routers[0].otherORAddresses == ["[fd66:0:0:2::104]:7004"])
    #expect(
      consensus.endpoints == [
        "10.66.1.104:7004", "[fd66:0:0:2::104]:7004", "10.66.1.101:7001", "10.66.1.101:7101",
      ])
  }

  @Test func aMalformedALineOrAZeroORPortNamesItsLine() {
    #expect(throws: TestnetError.malformedConsensus(line: 3, text: "a nowhere")) {
      try Consensus(
        text: "network-status-version 3 microdesc\n"
          + "r n id 2026-11-29 14:04:28 10.0.0.1 9001 0\na nowhere\n")
    }
    #expect(
      throws: TestnetError.malformedConsensus(
        line: 2, text: "r n id 2026-11-29 14:04:28 10.0.0.1 0 0")
    ) {
      try Consensus(text: "network-status-version 3\nr n id 2026-11-29 14:04:28 10.0.0.1 0 0\n")
    }
  }

  @Test func aMalformedRouterLineNamesItsLineNumber() {
    #expect(throws: TestnetError.malformedConsensus(line: 2, text: "r short line")) {
      try Consensus(text: "network-status-version 3\nr short line\n")
    }
  }

  @Test func torrcsFollowTheRecipe() throws {
    let plan = TestnetPlan.loopback()
    let auth = plan.authorities[0]
    let builder = TorrcBuilder(authorities: [
      .init(node: auth, v3Identity: "V3", fingerprint: "FP")
    ])
    let exit = builder.node(plan.nodes.first { $0.role == .exit }!, dataDirectory: "/d")
    #expect(exit.contains("ExitPolicy accept *:*"))
    #expect(exit.contains("ExitPolicyRejectPrivate 0"))
    #expect(exit.contains("DirAuthority auth1 orport=17001 no-v2 v3ident=V3 127.0.0.1:17101 FP"))
    let authority = builder.node(auth, dataDirectory: "/d")
    #expect(authority.contains("V3AuthoritativeDirectory 1"))
    let bridge = try BridgeLine("127.0.0.1:17031")
    let client = builder.client(dataDirectory: "/c", bridges: [bridge])
    #expect(client.contains("UseBridges 1"))
    #expect(client.contains("Bridge 127.0.0.1:17031"))
    #expect(client.contains("SocksPort 127.0.0.1:39050"))
    #expect(client.contains("CookieAuthentication 1"))
  }

  @Test func bootstrapLogLinesParse() {
    let log = """
      Nov 29 14:04:43.000 [notice] Bootstrapped 75% (enough_dirinfo): Loaded enough directory info to build circuits
      Nov 29 14:04:43.000 [notice] Something else
      Nov 29 14:04:44.000 [notice] Bootstrapped 100% (done): Done
      """
    let lines = BootstrapLogLine.all(in: log)
    #expect(lines.map(\.progress) == [75, 100])
    #expect(lines[0].tag == "enough_dirinfo")
    #expect(lines[1].summary == "Done")
  }
}

@Suite struct BootstrapProblemLineTests {
  @Test func parsesTorsStuckWarning() throws {
    let line: Substring =
      "Nov 29 14:16:22.000 [warn] Problem bootstrapping. Stuck at 5% (conn): Connecting to a relay. (Connection refused; CONNECTREFUSED; count 10; recommendation warn; host 0000000000000000000000000000000000000000 at 127.0.0.1:1)"
    let problem = try #require(BootstrapProblemLine(line))
    #expect(problem.progress == 5)
    #expect(problem.tag == "conn")
    #expect(problem.warning == "Connection refused")
    #expect(problem.reason == "CONNECTREFUSED")
    #expect(problem.count == 10)
    #expect(problem.hostAddress == "127.0.0.1:1")
    #expect(BootstrapProblemLine("[notice] Bootstrapped 5% (conn): Connecting to a relay") == nil)
  }
}

@Suite struct AppTorrcTests {
  static let base = "TestingTorNetwork 1\nDirAuthority auth1 orport=9001 127.0.0.1:9030 FP"

  @Test func theAppsTorrcIsTheBaseThenItsOwnOptions() throws {
    let torrc = ClientTorrc.app(
      base: Self.base, dataDirectory: "/s/tor/data", logDirectory: "/s/tor", socksPort: 39050,
      controlPort: 39051, owningControllerPID: 42, bridges: [])
    let lines = torrc.split(separator: "\n").map(String.init)
    #expect(Array(lines.prefix(2)) == Self.base.split(separator: "\n").map(String.init))
    #expect(
      Array(lines.dropFirst(3)) == [
        "DataDirectory /s/tor/data", "SocksPort 127.0.0.1:39050", "ControlPort 127.0.0.1:39051",
        "CookieAuthentication 1", "Log notice file /s/tor/notice.log",
        "Log [control]info file /s/tor/bootstrap-problems.log", "ClientUseIPv6 0",
        "__OwningControllerProcess 42", "DisableNetwork 1", "UseDefaultFallbackDirs 0",
      ])
    #expect(!torrc.contains("Bridge"))
  }

  @Test func bridgesMeanBridgesOnlyWithTheirTransport() throws {
    let obfs4 = try BridgeLine(
      "obfs4 10.66.1.106:4433 \(String(repeating: "AB", count: 20)) cert=c iat-mode=0")
    let plain = try BridgeLine("10.66.1.105:9001")
    let torrc = ClientTorrc.app(
      base: Self.base + "\n", dataDirectory: "/d", logDirectory: "/l", socksPort: 1,
      controlPort: 2, owningControllerPID: 3, bridges: [obfs4, plain])
    #expect(
      torrc.hasSuffix(
        "UseBridges 1\nClientTransportPlugin obfs4 exec /usr/bin/obfs4proxy\n"
          + "Bridge \(obfs4.text)\nBridge 10.66.1.105:9001\nUseDefaultFallbackDirs 0\n"))
    #expect(!torrc.contains("\n\n"))
  }

  @Test func theClientBaseIsTheNetworksSettingsOnly() {
    let plan = TestnetPlan.loopback()
    let builder = TorrcBuilder(authorities: [
      .init(node: plan.authorities[0], v3Identity: "V3", fingerprint: "FP")
    ])
    #expect(builder.clientBase == builder.common.joined(separator: "\n") + "\n")
    #expect(builder.clientBase.contains("DirAuthority auth1"))
    #expect(!builder.clientBase.contains("SocksPort"))
  }
}
