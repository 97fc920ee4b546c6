// swift-tools-version:6.0
// failclosed: proves with packet captures that an app's Tor integration fails closed.
import PackageDescription

let package = Package(
  name: "failclosed",
  platforms: [.macOS(.v14)],
  products: [
    .executable(name: "failclosed", targets: ["failclosed"]),
    .library(name: "FailClosedKit", targets: ["FailClosedCLI"]),
  ],
  targets: [
    // C libraries from Debian, reached through module maps and small inline shims.
    .systemLibrary(
      name: "CPcap", path: "Sources/Edges/CPcap", pkgConfig: "libpcap",
      providers: [.apt(["libpcap-dev"])]),
    .systemLibrary(
      name: "COpenSSL", path: "Sources/Edges/COpenSSL", pkgConfig: "openssl",
      providers: [.apt(["libssl-dev"])]),

    // The harness's spawn: a vfork whose child never execs once its parent is gone, and dies
    // with the thread that waits for it (C: it runs between fork and exec).
    .target(name: "CSpawn", path: "Sources/Edges/CSpawn"),
    // Clock, descriptors, sockets, processes: the edges every other module shares.
    .target(
      name: "FailClosedSupport", dependencies: ["CSpawn"], path: "Sources/Edges/FailClosedSupport"),
    // SHA-1 and SHA-256 in Swift, for the pure protocol modules (WebSocket accept, SAFECOOKIE).
    .target(name: "Digest", path: "Sources/Cores/Digest"),
    // The words scenario files, actions files, the censor and the mock's command line share:
    // action verbs, censor actions, stream fault kinds. One list each, no dependencies.
    .target(name: "Vocabulary", path: "Sources/Cores/Vocabulary"),
    // Pure protocol cores: bytes in, events and bytes out.
    .target(name: "SOCKS", path: "Sources/Cores/SOCKS"),
    .target(name: "TorControl", dependencies: ["Digest"], path: "Sources/Cores/TorControl"),
    // Onion Browser's Tor handling, modelled: each version's controller over the control
    // protocol (bytes in, commands and reports out), Tor.framework's TORController.
    .target(
      name: "OnionBrowserModel", dependencies: ["TorControl"],
      path: "Sources/Device/OnionBrowserModel"),
    // The mock Tor: SOCKS listener, bootstrap simulator, control port, stream faults.
    .target(
      name: "MockTor", dependencies: ["SOCKS", "TorControl", "FailClosedSupport"],
      path: "Sources/Device/MockTor"),
    // A private Tor network of Debian's tor processes (the real-Tor lane).
    .target(
      name: "Testnet", dependencies: ["TorControl", "FailClosedSupport"],
      path: "Sources/Edges/Testnet"),
    // OpenSSL at the edge: TLS client and server, a test CA made at run time.
    .target(
      name: "TLS", dependencies: ["COpenSSL", "HTTPCodec", "FailClosedSupport"],
      path: "Sources/Edges/TLS"),
    // Pure HTTP/1.1 and WebSocket (RFC 6455) codecs: bytes in, messages out.
    .target(name: "HTTPCodec", dependencies: ["Digest"], path: "Sources/Cores/HTTPCodec"),
    // The pure decoder and deny-by-default policy; libpcap capture and pcap files.
    .target(name: "Audit", dependencies: ["FailClosedSupport"], path: "Sources/Edges/Audit"),
    // Made-up frames and traffic (canaries, controls, generated captures) for tests, gen-pcap
    // and tools/bench: generators, not part of the audit.
    .target(
      name: "SyntheticTraffic", dependencies: ["Audit"], path: "Sources/Front/SyntheticTraffic"),
    .target(
      name: "Capture", dependencies: ["CPcap", "Audit", "FailClosedSupport"],
      path: "Sources/Edges/Capture"),
    // Namespaces, veths, nftables, the world's services.
    .target(
      name: "Sandbox",
      dependencies: [
        "Capture", "Audit", "TLS", "HTTPCodec", "SOCKS", "MockTor", "Vocabulary",
        "FailClosedSupport",
      ], path: "Sources/Device/Sandbox"),
    // bitchat's Tor layer, modelled on Linux.
    .target(
      name: "SystemUnderTest",
      dependencies: [
        "SOCKS", "TLS", "HTTPCodec", "MockTor", "TorControl", "OnionBrowserModel", "Vocabulary",
        "FailClosedSupport",
      ], path: "Sources/Device/SystemUnderTest"),
    // The bitchat-source lane: bitchat's own files, found in a checkout and built with the
    // project's shims (BitchatShims/) in a generated package.
    .target(
      name: "BitchatSource", dependencies: ["Digest", "FailClosedSupport"],
      path: "Sources/Device/BitchatSource"),
    // The scenario model: files, parser, expectation kinds, judge. Pure: no sandbox, no app.
    .target(
      name: "Scenarios", dependencies: ["Audit", "TorControl", "Vocabulary", "FailClosedSupport"],
      path: "Sources/Model/Scenarios"),
    // The reports a run is written to: JSON, JUnit, SARIF, Markdown, HTML, the terminal table.
    .target(
      name: "Reports", dependencies: ["Scenarios", "Audit", "FailClosedSupport"],
      path: "Sources/Runs/Reports"),
    // The lanes: one pipeline (sandbox, capture, Tor side, app, actions, judge) and what each
    // lane plugs in: the mock Tor, bitchat's own code on the mock, Debian's tor on a private
    // network in the world namespace, an OONI measurement replayed there.
    .target(
      name: "Lanes",
      dependencies: [
        "Scenarios", "Sandbox", "SystemUnderTest", "Testnet", "TorControl", "Capture", "Audit",
        "BitchatSource", "Vocabulary", "FailClosedSupport",
      ], path: "Sources/Runs/Lanes"),
    // OONI measurements of Tor read (bytes in, a model out) and mapped to real-tor scenarios.
    .target(name: "OONI", dependencies: ["Scenarios", "TorControl"], path: "Sources/Model/OONI"),
    .target(
      name: "FailClosedCLI",
      dependencies: [
        "OONI", "Scenarios", "Lanes", "Reports", "Sandbox", "SystemUnderTest", "MockTor",
        "TorControl", "Audit", "SyntheticTraffic", "Capture", "Testnet", "TLS", "BitchatSource",
        "Vocabulary", "FailClosedSupport",
      ], path: "Sources/Front/FailClosedCLI"),
    .executableTarget(
      name: "failclosed", dependencies: ["FailClosedCLI", "FailClosedSupport"],
      path: "Sources/Front/failclosed"),
    // Load generators for tools/bench: the SOCKS load client and the capture-fidelity sender.
    .executableTarget(
      name: "fcbench", dependencies: ["SOCKS", "Sandbox", "Capture", "Audit", "FailClosedSupport"],
      path: "Sources/Front/fcbench"),

    // What the test targets share: the built binary's path, the wait-until helper, the traits
    // that skip a test locally without root or a tool (never in CI), a network namespace of a
    // test's own, a free loopback port, a child's output read line by line.
    .target(name: "TestSupport", dependencies: ["FailClosedSupport"], path: "Tests/TestSupport"),

    .testTarget(name: "SupportTests", dependencies: ["FailClosedSupport", "TestSupport"]),
    .testTarget(name: "SOCKSTests", dependencies: ["SOCKS"]),
    .testTarget(name: "TorControlTests", dependencies: ["TorControl", "Digest"]),
    .testTarget(name: "OnionBrowserModelTests", dependencies: ["OnionBrowserModel", "TorControl"]),
    .testTarget(name: "DigestTests", dependencies: ["Digest"]),
    .testTarget(
      name: "MockTorTests",
      dependencies: ["MockTor", "SOCKS", "TorControl", "FailClosedSupport", "TestSupport"]),
    .testTarget(
      name: "TestnetTests",
      dependencies: ["Testnet", "TorControl", "FailClosedSupport", "TestSupport"]),
    .testTarget(
      name: "RealTorLaneTests",
      dependencies: [
        "Lanes", "Scenarios", "Sandbox", "Testnet", "Audit", "FailClosedSupport", "OONI",
        "TestSupport",
      ]),
    .testTarget(
      name: "TLSTests", dependencies: ["TLS", "HTTPCodec", "FailClosedSupport", "TestSupport"]),
    .testTarget(name: "HTTPCodecTests", dependencies: ["HTTPCodec"]),
    .testTarget(name: "AuditTests", dependencies: ["Audit", "SyntheticTraffic"]),
    .testTarget(
      name: "CaptureTests",
      dependencies: ["Capture", "Audit", "SyntheticTraffic", "FailClosedSupport", "TestSupport"]),
    .testTarget(
      name: "SandboxTests",
      dependencies: [
        "Sandbox", "Capture", "Audit", "HTTPCodec", "FailClosedSupport", "TestSupport",
      ]),
    .testTarget(
      name: "SystemUnderTestTests",
      dependencies: [
        "SystemUnderTest", "MockTor", "TLS", "HTTPCodec", "TorControl", "OnionBrowserModel",
        "FailClosedSupport", "TestSupport",
      ]),
    .testTarget(
      name: "ScenariosTests",
      dependencies: [
        "Scenarios", "Lanes", "Reports", "Sandbox", "SystemUnderTest", "MockTor", "Audit",
        "BitchatSource", "Vocabulary", "FailClosedSupport", "TestSupport",
      ]),
    // corpus/: real OONI measurements of Tor, byte for byte (sources in corpus/README.md);
    // synthetic/: made-up ones in the same formats (said so in its README).
    .testTarget(
      name: "OONITests", dependencies: ["OONI", "Scenarios", "FailClosedSupport", "TestSupport"],
      exclude: ["corpus", "synthetic"]),
    .testTarget(
      name: "CLITests",
      dependencies: [
        "FailClosedCLI", "Audit", "Capture", "Sandbox", "FailClosedSupport", "Scenarios",
        "SyntheticTraffic", "Lanes", "Vocabulary", "TestSupport",
      ]),
    .testTarget(
      name: "BitchatSourceTests",
      dependencies: ["BitchatSource", "Scenarios", "Lanes", "FailClosedSupport", "TestSupport"],
      exclude: ["Fixtures"]),
  ],
  swiftLanguageModes: [.v6]
)
