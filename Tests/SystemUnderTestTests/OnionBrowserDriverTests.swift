import FailClosedSupport
import Foundation
import MockTor
import Testing

@testable import SystemUnderTest

/// `failclosed app --profile onion-browser` against the mock's ctor control port and the mock's
/// SOCKS port, with an HTTPS world server behind the mock.
@Suite struct OnionBrowserDriverTests {
  @Test(.timeLimit(.minutes(1)))
  func heldURLLoadsThroughTorOnlyAfterBootstrap() async throws {
    let world = try LocalWorldServer(names: ["web.test"])
    defer { world.stop() }
    let pemPath = NSTemporaryDirectory() + "failclosed-ob-ca-\(getpid()).pem"
    try world.authority.rootCertificatePEM.write(toFile: pemPath, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: pemPath) }
    // SOCKS is ready at once: a load before the controller saw 100 % would succeed, so the
    // order of events is what proves the hold.
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
      port: 0, auth: "password:s3cret", plan: "healthy:1.5", clock: SystemClock(),
      disableNetwork: true,
      log: { event, _, fields in
        if event == "control" { controlCommands.add(fields["command"] ?? "") }
      })
    control.start()
    defer { control.stop() }

    var options = AppDriver.Options()
    options.profile = .onionBrowser
    options.backend = .ctor
    options.control = control.address
    options.controlAuthentication = .password("s3cret")
    options.socks = socks
    options.trustPEMPath = pemPath
    let collected = EventCollector()
    try await AppDriver.run(
      actions: [
        AppAction(at: 0, .start),
        AppAction(at: 0.1, .openURL("onionbrowsers://web.test/page")),
        AppAction(at: 0.2, .openURL("https://web.test/direct")),
        AppAction(at: 3.5, .openURL("onionbrowser://web.test/later")),
        AppAction(.wait(0.3)),
      ], options: options, sink: { collected.add($0) })

    let events = collected.events
    func first(_ match: (AppEvent) -> Bool) -> AppEvent? { events.first(where: match) }
    let ready = try #require(
      first { $0.kind == .tor && $0["phase"] == "bootstrap" && $0["progress"] == 100 })
    let held = try #require(first { $0.kind == .request && $0["phase"] == "held" })
    #expect(held["url"] == "https://web.test/page")
    #expect(held.time < ready.time)
    let start = try #require(first { $0.kind == .request && $0["phase"] == "start" })
    #expect(start["url"] == "https://web.test/page")
    #expect(start["via"] == "tor")
    #expect(start.time >= ready.time)
    let done = first { $0.kind == .request && $0["phase"] == "done" }
    #expect(done?["status"] == 200)
    #expect(
      first { $0.kind == .request && $0["phase"] == "ignored" }?["url"]
        == "https://web.test/direct")
    let confirm = first { $0.kind == .request && $0["phase"] == "confirm" }
    #expect(confirm?["url"] == "http://web.test/later")
    // Only the held URL was loaded, and every socket went to the SOCKS port.
    #expect(events.filter { $0.kind == .request && $0["phase"] == "start" }.count == 1)
    let sockets = events.filter { $0.kind == .socket }
    #expect(!sockets.isEmpty)
    #expect(sockets.allSatisfy { $0["transport"] == "tor" })
    #expect(sockets.allSatisfy { $0["endpoint"]?.description == socks.description })
    #expect(!sockets.contains { $0.time < ready.time })
    // The mock saw the hostname (no local resolution) for the one stream.
    let streams = mock.eventLog.events("socks")
    #expect(streams.count == 1)
    #expect(streams.first?["destination"] == .string("web.test"))
    // The controller started tor with TAKEOWNERSHIP and disabled its network at the end.
    let commands = controlCommands.values
    #expect(commands.prefix(4) == ["AUTHENTICATE", "TAKEOWNERSHIP", "SETEVENTS", "SETCONF"])
    #expect(events.last?["action"] == "end")
    #expect(
      events.contains { $0.kind == .tor && $0["command"] == "SETCONF DisableNetwork=1" })
  }

  @Test func needsAControlPortBackend() async throws {
    var options = AppDriver.Options()
    options.profile = .onionBrowser
    options.backend = .arti
    await #expect {
      try await AppDriver.run(actions: [], options: options, sink: { _ in })
    } throws: { error in
      "\(error)".contains("--backend ctor") && "\(error)".contains("--backend arti")
    }
  }

  @Test func openURLParsesAndNeedsItsURL() throws {
    let actions = try AppAction.parseFile(
      #"{"at": 3, "action": "open-url", "url": "onionbrowser://a.test/"}"#, name: "a")
    #expect(actions == [AppAction(at: 3, .openURL("onionbrowser://a.test/"))])
    #expect {
      _ = try AppAction.parseFile(#"{"action": "open-url"}"#, name: "a")
    } throws: { error in
      "\(error)".hasPrefix("a:1: action 'open-url' needs a string field 'url'")
    }
  }
}
