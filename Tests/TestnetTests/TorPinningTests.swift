import Foundation
import TestSupport
import Testing
import TorControl

@testable import Testnet

/// The harness's own safety: every place in the project that starts tor is known, and each
/// starts it pinned (private DirAuthority lines, or a loopback bridge with UseBridges 1).
/// A new place fails this test until it is reviewed and added below with its check.
@Suite struct TorPinningTests {
  /// Text that starts a tor process (Swift argument lists and shell commands).
  static let startPatterns = [
    #""tor", "-f""#, #""/usr/bin/tor""#, #"torBinary, "-f""#, "setsid tor ", "exec tor ",
    #"["tor", "#,
  ]

  /// Every file that starts tor, and how it is pinned (checked by the tests below).
  static let reviewed: [String: String] = [
    "Sources/Edges/Testnet/TorNetwork.swift":
      "the private network's nodes: TorrcBuilder.node, checked below",
    "Sources/Edges/Testnet/TorClientProcess.swift": "TorrcBuilder.client, checked below",
    "Sources/Device/SystemUnderTest/DebianTorBackend.swift":
      "ClientTorrc.app over a base that DebianTorConfiguration.checkBase refuses without "
      + "DirAuthority lines (DebianTorBackendTests); the appClient output is checked below",
    "Sources/Device/SystemUnderTest/DebianTorBackendConfiguration.swift":
      "the default /usr/bin/tor path",
    "Tests/MockTorTests/TorDifferentialTests.swift": "its torrc literal, checked below",
    "Tests/MockTorTests/ControlPortRealClientTests.swift": "its torrc literal, checked below",
    "Tests/SystemUnderTestTests/DebianTorControlTests.swift": "its torrc literal, checked below",
    "Sources/Front/FailClosedCLI/Commands/LeakAuditCommand.swift":
      "`tor --version`: prints and exits",
    "Tests/TestnetTests/TestnetShutdownTests.swift": "a stand-in named tor (a copy of /bin/sh)",
    "tools/bench": "the client torrc `testnet up` wrote (TorrcBuilder.client)",
    "Sources/Model/OONI/OONIParser.swift": "starts nothing: OONI's test names [\"tor\", ...]",
    "Tests/CLITests/InstallDepsScriptTests.swift":
      "starts nothing: package names for apt stand-ins",
    "Tests/RealTorLaneTests/ExecRealTorTests.swift":
      "only checks /usr/bin/tor exists; `exec --tor real` starts it through ExecRealTor: "
      + "TorrcBuilder.client plus the private network's DirAuthority lines, in the device",
    "BitchatShims/ArtiLinux/DebianTorArtiConfiguration.swift":
      "arti.h over Debian's tor (bitchat-source, real lane): the base must have a DirAuthority "
      + "line and no FallbackDir, bridge, %include or option the backend owns, loopback only "
      + "outside a harness namespace (checkBase, refused naming the line; bitchat-source-checks), "
      + "plus UseDefaultFallbackDirs 0; the real lane gives it the network's clientBase",
    "Tests/BitchatSourceTests/BitchatSourceLaneTests.swift":
      "only checks /usr/bin/tor exists; the leak-audit it runs starts tor through arti.h over "
      + "Debian's tor (DebianTorArtiConfiguration), in the device",
    "BitchatShims/ArtiLinux/DebianTorArtiBootstrap.swift":
      "starts tor with DebianTorArtiConfiguration.torrc (the checked base), in the app's "
      + "namespace (the real lane's device)",
    "BitchatShims/Checks/DebianTorArtiChecks.swift":
      "a tor through that configuration, its one DirAuthority on a closed loopback port",
  ]

  static func files(under directory: String) -> [String] {
    let base = repositoryRoot + "/" + directory
    guard let enumerator = FileManager.default.enumerator(atPath: base) else { return [] }
    return enumerator.compactMap { $0 as? String }.filter { !$0.hasPrefix(".") }
      .map { directory + "/" + $0 }
      .filter { path in
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(
          atPath: repositoryRoot + "/" + path, isDirectory: &isDirectory)
          && !isDirectory.boolValue
      }
  }

  @Test func everyPlaceThatStartsTorIsReviewed() throws {
    var found: Set<String> = []
    for path in Self.files(under: "Sources") + Self.files(under: "Tests")
      + Self.files(under: "tools") + Self.files(under: "BitchatShims")
    where path != "Tests/TestnetTests/TorPinningTests.swift" {
      guard let data = FileManager.default.contents(atPath: repositoryRoot + "/" + path),
        let text = String(data: data, encoding: .utf8)
      else { continue }
      if Self.startPatterns.contains(where: { text.contains($0) }) { found.insert(path) }
    }
    // The scan itself works: it finds the places known today.
    #expect(found.contains("Sources/Edges/Testnet/TorNetwork.swift"))
    let unreviewed = found.subtracting(Self.reviewed.keys).sorted()
    #expect(unreviewed.isEmpty, "starts tor, not reviewed for pinning: \(unreviewed)")
    let gone = Set(Self.reviewed.keys).subtracting(found).sorted()
    #expect(gone.isEmpty, "reviewed but no longer starts tor (update the list): \(gone)")
  }

  /// The torrc literals of the tests that start Debian's tor.
  @Test(arguments: [
    "Tests/MockTorTests/TorDifferentialTests.swift",
    "Tests/MockTorTests/ControlPortRealClientTests.swift",
    "Tests/SystemUnderTestTests/DebianTorControlTests.swift",
  ])
  func testsStartTorPinned(_ path: String) throws {
    let text = try String(contentsOfFile: repositoryRoot + "/" + path, encoding: .utf8)
    let blocks = text.components(separatedBy: "\"\"\"").enumerated()
      .filter { $0.offset % 2 == 1 }.map(\.element)
      .filter { $0.contains("DataDirectory") }
    try #require(!blocks.isEmpty, "no torrc literal found in \(path)")
    for block in blocks {
      #expect(TorrcPinning.problems(block) == [], "\(path): \(block)")
    }
  }

  static let builder = TorrcBuilder(
    authorities: TestnetPlan.loopback().authorities.map {
      TorrcBuilder.AuthorityIdentity(
        node: $0, v3Identity: String(repeating: "A", count: 40),
        fingerprint: String(repeating: "B", count: 40))
    })

  @Test func theNetworkAndItsClientsArePinned() throws {
    for plan in [
      TestnetPlan.loopback(),
      TestnetPlan.world(addresses: (1...6).map { "10.66.2.\($0)" }),
    ] {
      for node in plan.nodes {
        let torrc = Self.builder.node(node, dataDirectory: "/tmp/x")
        #expect(TorrcPinning.problems(torrc) == [], "\(node.name)")
      }
    }
    let bridge = try BridgeLine(
      "obfs4 127.0.0.1:17041 " + String(repeating: "C", count: 40) + " cert=abc iat-mode=0")
    for bridges in [[], [bridge]] {
      let client = Self.builder.client(dataDirectory: "/tmp/c", bridges: bridges)
      #expect(TorrcPinning.problems(client) == [])
      let app = ClientTorrc.app(
        base: Self.builder.clientBase, dataDirectory: "/tmp/a", logDirectory: "/tmp/a",
        socksPort: 39050, controlPort: 39051, owningControllerPID: 1, bridges: bridges)
      #expect(TorrcPinning.problems(app) == [])
    }
  }

  /// Canaries: what the check must catch.
  @Test(arguments: [
    ("DisableNetwork 1\nSocksPort 0\n", "tor would use the public Tor network"),
    ("UseBridges 1\nBridge 192.0.2.1:443\n", "192.0.2.1:443 is neither loopback"),
    ("DirAuthority a orport=1 v3ident=AB 198.51.100.1:80 CD\n", "198.51.100.1:80 is neither"),
    ("UseBridges 1\n", "UseBridges 1 without a Bridge line"),
    ("Bridge 127.0.0.1:1\n", "tor would use the public Tor network"),
    ("%include /etc/tor/torrc.d\nUseBridges 1\nBridge 127.0.0.1:1\n", "cannot be checked"),
    (
      "UseBridges 1\nBridge 127.0.0.1:1\nFallbackDir 203.0.113.5:80 orport=9001 id=AA\n",
      "203.0.113.5:80 is neither"
    ),
  ])
  func unpinnedTorrcsAreCaught(_ torrc: String, _ problem: String) {
    let problems = TorrcPinning.problems(torrc)
    #expect(problems.contains { $0.contains(problem) }, "\(problems)")
  }

  /// Positive controls.
  @Test func pinnedTorrcsPass() {
    #expect(TorrcPinning.problems("UseBridges 1\nBridge 127.0.0.1:1\nDisableNetwork 1\n") == [])
    #expect(
      TorrcPinning.problems(
        "DirAuthority auth1 orport=17001 no-v2 v3ident=AA 127.0.0.1:17101 BB\n") == [])
  }
}
