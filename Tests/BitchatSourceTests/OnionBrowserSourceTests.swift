import FailClosedSupport
import Foundation
import Lanes
import Scenarios
import TestSupport
import Testing

@testable import BitchatSource

/// The onion-browser-source lane on the project's own fixture (Fixtures/onion-browser-fixture:
/// Onion Browser 2.X's OnionManager API shape, written here): built by the lane's builder
/// against OnionBrowserShims, its Tor.framework shim talking to the mock's ctor control port.
enum OnionBrowserFixture {
  static let root =
    BitchatSourceLocation.packageRoot + "/Tests/BitchatSourceTests/Fixtures/onion-browser-fixture"

  /// The fixture's package, built once per key (the user's cache, as the lane's).
  static func build() throws -> (package: OnionBrowserSourcePackage, executable: String) {
    let tree = try OnionBrowserTree(root: root)
    let package = try OnionBrowserSourcePackage(
      tree: tree, packageRoot: BitchatSourceLocation.packageRoot,
      cacheRoot: OnionBrowserSourceLocation.cacheRoot + "/packages")
    let result = try OnionBrowserSourceBuilder(package: package).build(progress: { _ in })
    return (package, result.executable)
  }

  /// Runs the driver with `actions` against the control port at `control`; its JSON events.
  static func drive(_ executable: String, actions: String, control: UInt16) throws -> [[String:
    Any]]
  {
    let directory = NSTemporaryDirectory() + "onion-browser-fixture-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try actions.write(toFile: directory + "/actions.jsonl", atomically: true, encoding: .utf8)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = [
      "--actions", directory + "/actions.jsonl", "--state-dir", directory + "/state",
      "--control", "127.0.0.1:\(control)",
    ]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap {
      try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
  }

  static func commands(_ events: [[String: Any]]) -> [String] {
    events.filter { $0["phase"] as? String == "command" }.compactMap { $0["command"] as? String }
  }

  static func ready(_ events: [[String: Any]]) -> Bool {
    events.contains { $0["field"] as? String == "isReady" && $0["value"] as? Bool == true }
  }
}

@Suite(
  .serialized,
  .needsFailclosedBinary)
struct OnionBrowserSourceFixtureTests {
  /// Positive control: the shim's conversation with the mock's ctor control port, as
  /// TORController.m holds it: cookie AUTHENTICATE, SETEVENTS STATUS_CLIENT, GETINFO
  /// status/circuit-established, the harness's DisableNetwork 0, bootstrap events to 100,
  /// CIRCUIT_ESTABLISHED (the fixture's state connected: ready), SIGNAL SHUTDOWN on background
  /// (stopTor's disconnect), the connection closed by the mock. Canary: the same driver with
  /// nothing at the control port sends nothing and is never ready.
  @Test func theShimHoldsTheControlPortConversationWithTheMock() throws {
    let (_, executable) = try OnionBrowserFixture.build()
    let socks = try freeLoopbackPort()
    let control = try freeLoopbackPort()
    let mock = Process()
    mock.executableURL = URL(fileURLWithPath: FailclosedBinary.path)
    mock.arguments = [
      "mock-tor", "--personality", "ctor", "--listen", "127.0.0.1:\(socks)", "--control-port",
      String(control), "--control-disable-network", "--bootstrap-plan", "healthy:2",
    ]
    let output = Pipe()
    mock.standardOutput = output
    mock.standardError = FileHandle.nullDevice
    try mock.run()
    defer {
      if mock.isRunning { mock.terminate() }
      mock.waitUntilExit()
    }
    // The mock says so once its control port listens (as the scenario runner waits for it).
    let lines = LineReader(output.fileHandleForReading)
    try #require(lines.waitFor("mock-tor: control port on") != nil, "the mock never listened")
    let actions = """
      {"at": 0, "action": "start"}
      {"at": 5, "action": "background"}
      {"at": 6, "action": "wait", "seconds": 0}

      """
    let events = try OnionBrowserFixture.drive(executable, actions: actions, control: control)
    let commands = OnionBrowserFixture.commands(events)
    #expect(
      commands == [
        "AUTHENTICATE <secret>", "SETEVENTS STATUS_CLIENT", "GETINFO status/circuit-established",
        "SETCONF DisableNetwork=0", "SIGNAL SHUTDOWN",
      ], "\(events)")
    let progress = events.filter { $0["phase"] as? String == "bootstrap" }
      .compactMap { ($0["progress"] as? String).flatMap { Int($0) } }
    #expect(progress.last == 100, "\(progress)")
    #expect(OnionBrowserFixture.ready(events))
    #expect(
      events.contains {
        $0["field"] as? String == "state" && $0["value"] as? String == "stopped"
      })
    #expect(
      events.contains {
        ($0["detail"] as? String)?.hasPrefix("control connection closed") == true
      })

    let closed = try freeLoopbackPort()
    let nothing = try OnionBrowserFixture.drive(executable, actions: actions, control: closed)
    #expect(OnionBrowserFixture.commands(nothing).isEmpty, "\(nothing)")
    #expect(!OnionBrowserFixture.ready(nothing))
  }

  /// A name no shim provides stops the build with Onion Browser's file and line, the symbol
  /// and the shim that lacks it (canary); the fixture itself builds (positive control, above).
  @Test func anUnknownSymbolNamesTheFileTheSymbolAndTheShim() throws {
    let (package, _) = try OnionBrowserFixture.build()
    let relative = "broken/OnionManagerStep.swift"
    let link = package.directory + "/Sources/OnionBrowserApp/" + relative
    try FileManager.default.createDirectory(
      atPath: (link as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try? FileManager.default.removeItem(atPath: link)
    try FileManager.default.createSymbolicLink(
      atPath: link, withDestinationPath: OnionBrowserFixture.root + "/" + relative)
    defer {
      try? FileManager.default.removeItem(atPath: (link as NSString).deletingLastPathComponent)
    }
    let output = try SwiftBuildProcess.run(
      BitchatSourceBuilder.defaultSwift(),
      [
        "build", "--package-path", package.directory, "--product",
        OnionBrowserSourcePackage.executableName,
      ], progress: { _ in })
    #expect(output.status != 0)
    var links = package.linkMap
    links[link] = relative
    let error = OnionBrowserDiagnostics.error(
      for: output.text, links: links, root: OnionBrowserFixture.root)
    #expect(
      error
        == .unknownSymbol(
          file: OnionBrowserFixture.root + "/" + relative, line: 6, symbol: "rebuildAllCircuits",
          shim: "the Tor.framework shim (OnionBrowserShims/Tor)",
          diagnostic: "value of type 'TorController' has no member 'rebuildAllCircuits'"),
      "\(error)")
    #expect(
      "\(error)".contains(
        "broken/OnionManagerStep.swift:6: 'rebuildAllCircuits' is provided by no shim: "
          + "the Tor.framework shim (OnionBrowserShims/Tor) lacks it"))
  }
}

/// The diagnostics' mapping on the compiler's own words (no build).
struct OnionBrowserDiagnosticsTests {
  @Test func eachUnknownNameGoesToItsShim() {
    let links = [
      "/c/k/Sources/OnionBrowserApp/OnionBrowser/TorManager.swift": "OnionBrowser/TorManager.swift"
    ]
    let output = """
      /c/k/Sources/OnionBrowserApp/OnionBrowser/TorManager.swift:62:28: error: cannot find 'DispatchQueue' in scope
      /c/k/Sources/OnionBrowserApp/OnionBrowser/TorManager.swift:80:9: error: type 'IpSupport' has no member 'shared'
      /c/k/Sources/OnionBrowserApp/OnionBrowser/TorManager.swift:90:3: error: cannot find type 'UIApplication' in scope
      /c/k/Sources/OnionBrowserApp/OnionBrowser/TorManager.swift:9:8: error: no such module 'Orbot'
      /c/k/Sources/Tor/TorController.swift:1:1: error: cannot find 'X' in scope
      """
    let shims = OnionBrowserDiagnostics.parse(output, links: links, root: "/src").map { error in
      guard case .unknownSymbol(let file, _, let symbol, let shim, _) = error else { return "" }
      return "\(file) \(symbol): \(shim)"
    }
    #expect(
      shims == [
        "/src/OnionBrowser/TorManager.swift DispatchQueue: the app stand-ins (OnionBrowserShims/AppStandIns)",
        "/src/OnionBrowser/TorManager.swift shared: the IPtProxyUI shim (OnionBrowserShims/IPtProxyUI)",
        "/src/OnionBrowser/TorManager.swift UIApplication: UIKit/WebKit (no shim: OnionBrowserShims has none)",
        "/src/OnionBrowser/TorManager.swift Orbot: no shim module named Orbot (OnionBrowserShims/Orbot)",
      ])
  }

  /// The tree: 2.X by OnionManager.swift, 3.X by TorManager.swift, each only when it runs
  /// tor with TorThread; anything else is refused with the reason.
  @Test func theTorLayerIsFoundByPathAndTorThread() throws {
    let fixture = try OnionBrowserTree(root: OnionBrowserFixture.root)
    #expect(fixture.version == .v2)
    #expect(fixture.torLayer == "OnionBrowser/OnionManager.swift")
    let temporary = URL(fileURLWithPath: NSTemporaryDirectory()).standardizedFileURL.path
    #expect(throws: OnionBrowserSourceError.noTorLayer(temporary)) {
      try OnionBrowserTree(root: temporary)
    }
    #expect(throws: OnionBrowserSourceError.noCheckout("/nonexistent/onion")) {
      try OnionBrowserTree(root: "/nonexistent/onion")
    }
  }
}

/// A short Onion Browser 2.X scenario on the fixture, in the sandbox (about 15 s): the positive
/// control passes (the URL opened before tor is ready goes to tor's SOCKS port, only Tor on
/// the wire); the canary, the same run held to an expectation the code cannot meet (3.X's
/// cancelled load), must come out FAILED.
@Suite(
  .serialized, .needsRoot,
  .needsFailclosedBinary)
struct OnionBrowserSourceLaneTests {
  static func scenario(name: String, events: [String]) throws -> Scenario {
    let directory = NSTemporaryDirectory() + "onion-browser-lane-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let list = events.map { "\"\($0)\"" }.joined(separator: ", ")
    let text = """
      {
        "title": "onion-browser-source on the fixture",
        "proves": "the lane runs Onion Browser-shaped code against the mock's control port",
        "duration": 12,
        "tor": {"personality": "ctor", "bootstrap": "healthy:3"},
        "app": {
          "profile": "onion-browser-2",
          "actions": [
            {"at": 0, "do": "start"},
            {"at": 1, "do": "open-url", "url": "onionhttps://example.com/start"}
          ]
        },
        "expect": [
          {"kind": "no-leak"},
          {"kind": "traffic-only-to-tor"},
          {"kind": "events-in-order", "events": [\(list)]}
        ]
      }
      """
    let path = directory + "/\(name).json"
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    return try ScenarioLoader.loadFile(path).get()
  }

  @Test func aScenarioRunsToItsVerdictOnTheFixture() async throws {
    let (_, executable) = try OnionBrowserFixture.build()
    var options = ScenarioRunner.Options(executable: FailclosedBinary.path)
    options.onionBrowserSourceDriver = executable
    let runner = ScenarioRunner(options: options)
    let positive = try Self.scenario(
      name: "fixture-url-through-tor",
      events: ["request-pending", "request-sent transport=tor", "ready-changed isReady=true"])
    let canary = try Self.scenario(
      name: "fixture-held-to-3x", events: ["request-cancelled", "ready-changed isReady=true"])
    // A run the harness made late is run again, as the batches do.
    async let first = LateRunRetry.outcome(positive) { await runner.run(positive) }
    async let second = LateRunRetry.outcome(canary) { await runner.run(canary) }
    let (passed, held) = await (first, second)

    let result = ScenarioResult(scenario: positive, outcome: passed)
    #expect(passed.runError == nil, "\(passed.runError ?? "")")
    #expect(passed.audit.leaks.isEmpty, "\(passed.audit.leaks)")
    #expect(result.verdict == .pass, "\(result.judgement.reasons)")
    #expect(passed.events.contains { $0.name == "tor-command" })

    let caught = ScenarioResult(scenario: canary, outcome: held)
    #expect(held.runError == nil, "\(held.runError ?? "")")
    #expect(caught.verdict == .failed, "\(caught.judgement.reasons)")
  }
}

/// `leak-audit --compare onion-browser-2,onion-browser-source` on the fixture (about 45 s, both
/// scenarios side by side). Positive control: on onion-browser-2-url-loads-while-tor-starts the
/// model and the fixture's OnionManager agree item by item, the control-port commands
/// included. Canary: the fixture has no connection guard, so on
/// onion-browser-2-stall-cycles-disable-network the comparison must find the difference (no
/// DisableNetwork cycle, no torConnDifficulties) and fail the run (exit 5).
@Suite(
  .needsRoot,
  .needsFailclosedBinary)
struct OnionBrowserComparisonTests {
  @Test func theComparisonFindsWhatTheFixtureLacksAndNothingElse() throws {
    let report = NSTemporaryDirectory() + "onion-browser-compare-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: report) }
    let scenarios = BitchatSourceLocation.packageRoot + "/Scenarios/"
    let result = try runFailclosed([
      "leak-audit", scenarios + "onion-browser-2-url-loads-while-tor-starts.json",
      scenarios + "onion-browser-2-stall-cycles-disable-network.json",
      "--compare", "onion-browser-2,onion-browser-source", "--onion-browser-src",
      OnionBrowserFixture.root, "--report", report,
    ])
    #expect(result.status == 5, "\(result.output)")
    let data = try #require(FileManager.default.contents(atPath: report + "/report.json"))
    let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    let rows = try #require(object["scenarios"] as? [[String: Any]])
    func items(_ name: String) -> [[String: Any]] {
      rows.first { $0["scenario"] as? String == name }?["items"] as? [[String: Any]] ?? []
    }
    func status(_ name: String, _ key: String) -> String? {
      items(name).first { $0["key"] as? String == key }?["status"] as? String
    }
    let agreeing = "onion-browser-2-url-loads-while-tor-starts"
    #expect(items(agreeing).allSatisfy { $0["status"] as? String == "same" }, "\(items(agreeing))")
    #expect(status(agreeing, "commands") == "same")
    let lacking = "onion-browser-2-stall-cycles-disable-network"
    #expect(status(lacking, "commands") == "different", "\(items(lacking))")
    #expect(status(lacking, "verdict") == "different", "\(items(lacking))")
    #expect(status(lacking, "requests") == "different", "\(items(lacking))")
  }
}

/// The pinned commits (baselines/onion-browser-commits.json): one per branch, by full hash,
/// with the Tor layer and the versions the shims follow; `pinned:BRANCH` resolves to each. Their
/// build needs a clone of Onion Browser (`failclosed onion-browser-source build
/// --onion-browser-src pinned:2.X` with $FAILCLOSED_ONION_BROWSER_REPO), which CI has not: it
/// is run by hand (docs/onion-browser-source.md), never a test that would skip in CI.
@Suite struct OnionBrowserPinnedCommitTests {
  @Test(arguments: ["2.X", "3.X"])
  func eachBranchIsPinnedByHashWithItsTorLayer(branch: String) throws {
    let commit = try OnionBrowserSourceLocation.pinnedCommit(branch)
    #expect(commit.count == 40 && commit.allSatisfy(\.isHexDigit), "\(commit)")
    let path = BitchatSourceLocation.packageRoot + "/baselines/onion-browser-commits.json"
    let data = try #require(FileManager.default.contents(atPath: path))
    let file = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    let commits = try #require(file["commits"] as? [[String: Any]])
    let entry = try #require(commits.first { $0["branch"] as? String == branch })
    #expect(entry["commit"] as? String == commit)
    let layer = entry["torLayer"] as? String ?? ""
    #expect(layer.hasPrefix("OnionBrowser/") && layer.hasSuffix(".swift"), "\(layer)")
    #expect((entry["torFramework"] as? [String: String])?["commit"]?.count == 40)
  }

  /// Canary: a branch with no pinned commit is an error naming it.
  @Test func anUnpinnedBranchIsRefused() {
    #expect(throws: OnionBrowserSourceError.self) {
      try OnionBrowserSourceLocation.pinnedCommit("1.X")
    }
  }
}
