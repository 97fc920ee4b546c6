import FailClosedSupport
import Foundation
import MockTor
import OnionBrowserModel
import Testing
import TorControl

@testable import SystemUnderTest

/// `failclosed app --profile onion-browser` against the mock's ctor control port and the mock's
/// SOCKS port, with an HTTPS world server behind the mock.
@Suite struct OnionBrowserDriverTests {
  /// One run of `failclosed app --profile onion-browser-N --backend ctor` against the mock's
  /// control port (DisableNetwork 1 at start, healthy after 1.5 s of network) and the mock's
  /// SOCKS port (ready at once: a load before the controller's "ready" would succeed, so the
  /// order of events is what shows each version's rule).
  struct Run {
    let events: [AppEvent]
    let commands: [String]
    let socks: SocketAddress
    let streams: Int

    func first(_ match: (AppEvent) -> Bool) -> AppEvent? { events.first(where: match) }
    func requests(_ phase: String) -> [AppEvent] {
      events.filter { $0.kind == .request && $0["phase"]?.description == phase }
    }
    var ready: AppEvent? {
      first { $0.kind == .state && $0["field"] == "isReady" && $0["value"] == true }
    }
  }

  static func run(
    _ version: OnionBrowserVersion, _ actions: [AppAction], plan: String = "healthy:1.5",
    timeScale: Double = 1
  ) async throws -> Run {
    let world = try LocalWorldServer(names: ["web.test"])
    defer { world.stop() }
    let pemPath = NSTemporaryDirectory() + "failclosed-ob-ca-\(getpid())-\(version.rawValue).pem"
    try world.authority.rootCertificatePEM.write(toFile: pemPath, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: pemPath) }
    let mock = try MockTor(
      MockTorConfiguration(
        personality: .ctor, socksAddress: SocketAddress("127.0.0.1:0")!,
        bootstrapPlan: .healthy(after: 0),
        destinations: DestinationMap(["web.test": world.address])))
    try mock.start()
    defer { mock.stop() }
    let socks = try #require(mock.waitForListener())
    let controlCommands = EventCollectorStrings()
    let control = try ControlPortService(
      port: 0, auth: "password:s3cret", plan: plan, clock: SystemClock(),
      socksListeners: [socks.description], disableNetwork: true,
      log: { event, _, fields in
        if event == "control" {
          controlCommands.add(
            [fields["command"] ?? "", fields["arguments"] ?? ""].filter { !$0.isEmpty }
              .joined(separator: " "))
        }
      })
    control.start()
    defer { control.stop() }
    var options = AppDriver.Options()
    options.profile = AppDriver.Profile(rawValue: version.profileName)!
    options.backend = .ctor
    options.control = control.address
    options.controlAuthentication = .password("s3cret")
    options.socks = socks
    options.trustPEMPath = pemPath
    options.timeScale = timeScale
    let collected = EventCollector()
    try await AppDriver.run(actions: actions, options: options, sink: { collected.add($0) })
    // 3.X ends with SIGNAL SHUTDOWN: written when the run returns, read by the mock's own
    // thread a moment later. Wait for it (bounded); its absence fails the test below. (1.X and
    // 2.X send nothing: tor dies with the app.)
    for _ in 0..<150 where version == .v3 && !controlCommands.values.contains("SIGNAL SHUTDOWN") {
      try await Task.sleep(nanoseconds: 20_000_000)
    }
    return Run(
      events: collected.events, commands: controlCommands.values, socks: socks,
      streams: mock.eventLog.events("socks").count)
  }

  @Test(.timeLimit(.minutes(1)))
  func version1HoldsTheURLAndOnlyAsksAt100() async throws {
    let run = try await Self.run(
      .v1,
      [
        AppAction(at: 0, .start),
        AppAction(at: 0.1, .openURL(url: "onionbrowsers://web.test/page")),
        AppAction(at: 0.2, .openURL(url: "onionhttps://web.test/direct")),
        // Waits, not times: under load every action can come late, and a later URL opened
        // back to back with the early ones would arrive before Tor is ready.
        AppAction(.wait(seconds: 3.3)),
        AppAction(.openURL(url: "onionbrowser://web.test/later")),
        AppAction(.wait(seconds: 0.3)),
      ])
    let ready = try #require(run.ready)
    let held = try #require(run.requests("held").first)
    #expect(held["url"] == "https://web.test/page")
    #expect(held.time < ready.time)
    #expect(run.requests("ignored").first?["url"] == "onionhttps://web.test/direct")
    // At 100 % the held URL is asked about, then the later one: nothing loads without the user.
    #expect(
      run.requests("confirm").map { $0["url"]?.description } == [
        "https://web.test/page", "http://web.test/later",
      ])
    #expect(run.requests("start").isEmpty)
    #expect(run.streams == 0)
    #expect(!run.events.contains { $0.kind == .socket })
    // 1.X's client: polls, no events, no TAKEOWNERSHIP; nothing sent at the end.
    #expect(run.commands.contains { $0.lowercased() == "getinfo status/bootstrap-phase" })
    #expect(!run.commands.contains { $0.hasPrefix("SETEVENTS") || $0 == "TAKEOWNERSHIP" })
    #expect(!run.commands.contains("SIGNAL SHUTDOWN"))
    #expect(run.events.last?["action"] == "end")
  }

  @Test(.timeLimit(.minutes(1)))
  func version2OpensThePendingURLWhileTorStarts() async throws {
    let run = try await Self.run(
      .v2,
      [
        AppAction(at: 0, .start),
        AppAction(at: 0.1, .openURL(url: "onionhttps://web.test/page")),
        AppAction(at: 0.2, .openURL(url: "onionbrowser://web.test/not-2x")),
        AppAction(.wait(seconds: 3.5)),
      ])
    let ready = try #require(run.ready)
    // AppDelegate.swift l.284-292: active while tor starts -> torConnFinished -> the load, to
    // tor's SOCKS port, before tor is ready.
    let start = try #require(run.requests("start").first)
    #expect(start["url"] == "https://web.test/page")
    #expect(start.time < ready.time)
    #expect(run.requests("ignored").first?["url"] == "onionbrowser://web.test/not-2x")
    let sockets = run.events.filter { $0.kind == .socket }
    #expect(sockets.allSatisfy { $0["transport"] == "tor" })
    #expect(sockets.allSatisfy { $0["endpoint"]?.description == run.socks.description })
    #expect(run.commands.contains("SETEVENTS STATUS_CLIENT"))
    // The app's end does nothing to tor (AppDelegate.swift l.296-301; it dies with the app).
    #expect(!run.commands.contains("SIGNAL SHUTDOWN"))
  }

  /// AppDelegate.swift l.229-231 and l.284-289: background stops tor (SIGNAL SHUTDOWN, the
  /// mock's control port goes away as tor does), active again starts it afresh: a new start
  /// and a new connection (refused here: nothing restarts the mock).
  @Test(.timeLimit(.minutes(1)))
  func version2BackgroundShutsTorDownAndActiveStartsItAgain() async throws {
    let run = try await Self.run(
      .v2,
      [
        AppAction(at: 0, .start),
        AppAction(.wait(seconds: 4)),  // connected by then however late the start (see version 1)
        AppAction(.background),
        AppAction(.wait(seconds: 0.5)),
        AppAction(.foreground),
        AppAction(.wait(seconds: 1.5)),
      ])
    let states = run.events.filter { $0.kind == .state && $0["field"] == "state" }
      .compactMap { $0["value"]?.description }
    #expect(states == ["started", "connected", "stopped", "started"])
    let shutdown = try #require(
      run.first { $0.kind == .tor && $0["command"] == "SIGNAL SHUTDOWN" })
    #expect(shutdown.time >= 4)
    #expect(run.events.filter { $0.kind == .state && $0["field"] == "start" }.count == 2)
    // The relaunched controller's connection, 1 s after the new start, finds no tor.
    #expect(
      run.events.contains {
        $0.kind == .tor && $0.time > 5.4
          && $0["detail"]?.description.contains("control port") == true
      })
  }

  /// OnionManager.swift l.339-370 and AppDelegate.swift l.470-474: the guard's expiry shows the
  /// UI like torConnFinished, so the URL the app was launched with opens, tor not ready.
  @Test(.timeLimit(.minutes(1)))
  func version2GuardExpiryOpensThePendingURL() async throws {
    let run = try await Self.run(
      .v2,
      [
        AppAction(at: 0, .openURL(url: "onionhttps://web.test/launch")),
        AppAction(at: 0, .start),
        // The mock's plan runs in real time (a phase each 0.5 s = 12.5 app seconds).
        AppAction(.wait(seconds: 45)),
      ], plan: "stall:conn", timeScale: 25)
    let pending = try #require(run.requests("pending").first)
    let stalled = try #require(
      run.first { $0.kind == .tor && $0["phase"] == "problem" && $0["reason"] == "no-progress" })
    let start = try #require(run.requests("start").first)
    #expect(pending.time < stalled.time)
    #expect(start.time >= stalled.time)
    #expect(start["url"] == "https://web.test/launch")
    #expect(run.ready == nil)
    #expect(run.commands.filter { $0 == "SETCONF DisableNetwork=1" }.count == 1)
  }

  @Test(.timeLimit(.minutes(1)))
  func version3CancelsBeforeReadyAndLoadsThroughTheReportedSocksPort() async throws {
    let run = try await Self.run(
      .v3,
      [
        AppAction(at: 0, .start),
        AppAction(at: 0.1, .openURL(url: "onionhttps://web.test/early")),
        AppAction(at: 0.2, .openURL(url: "onionbrowser:token-callback?token=x")),
        // After ready however late the actions come (see version 1).
        AppAction(.wait(seconds: 3.3)),
        AppAction(.openURL(url: "onionhttps://web.test/later")),
        AppAction(.wait(seconds: 0.5)),
      ])
    let ready = try #require(run.ready)
    #expect(run.requests("cancelled").first?["url"] == "https://web.test/early")
    #expect(run.requests("callback").count == 1)
    let start = try #require(
      run.requests("start").first,
      "requests: \(run.events.filter { $0.kind == .request || $0.kind == .tor }.map { "\($0)" })")
    #expect(start["url"] == "https://web.test/later")
    #expect(start.time > ready.time)
    #expect(run.requests("start").count == 1)  // the cancelled one is not retried
    #expect(run.streams == 1)
    #expect(run.commands.contains("GETINFO net/listeners/socks"))
    #expect(run.commands.last == "SIGNAL SHUTDOWN")
  }

  @Test func needsAControlPortBackend() async throws {
    var options = AppDriver.Options()
    options.profile = .onionBrowser
    options.backend = .arti
    #expect(options.profile.onionBrowserVersion == .v3)  // the alias: the current release
    await #expect {
      try await AppDriver.run(actions: [], options: options, sink: { _ in })
    } throws: { error in
      "\(error)".contains("--backend ctor") && "\(error)".contains("--backend arti")
    }
  }

  @Test func openURLParsesAndNeedsItsURL() throws {
    let actions = try AppAction.parseFile(
      #"{"at": 3, "action": "open-url", "url": "onionbrowser://a.test/"}"#, name: "a")
    #expect(actions == [AppAction(at: 3, .openURL(url: "onionbrowser://a.test/"))])
    #expect {
      _ = try AppAction.parseFile(#"{"action": "open-url"}"#, name: "a")
    } throws: { error in
      "\(error)".hasPrefix("a:1: action 'open-url' needs a string field 'url'")
    }
  }
}
