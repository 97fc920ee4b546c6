import FailClosedSupport
import Testing

@testable import SystemUnderTest

@Suite @AppActor struct NostrRelayManagerTests {
  @AppActor final class Rig {
    let clock = ManualClock()
    let log: AppEventLog
    let session = FakeSession()
    let waiter = TorWaiter()
    var torEnabled = true
    var foreground = true
    var allowed = true
    var permission = true
    var favourites = false
    var inChannel = false
    var random = SeededRandom(seed: 7)
    var manager: NostrRelayManager!

    init(torEnabled: Bool = true, torReady: Bool = false) {
      log = AppEventLog(clock: clock)
      self.torEnabled = torEnabled
      waiter.ready = torReady
      let settings = NostrRelaySettings(store: KeyValueStore(), torSupportsOnionServices: false)
      let dependencies = NostrRelayManager.Dependencies(
        activationAllowed: { self.allowed }, userTorEnabled: { self.torEnabled },
        torEnforced: true, torIsReady: { self.waiter.ready },
        torIsForeground: { self.foreground }, awaitTorReady: { self.waiter.await($0) },
        makeSession: { self.session }, jitterUnit: { self.random.nextUnit() },
        hasMutualFavorites: { self.favourites }, hasLocationPermission: { self.permission },
        isInLocationChannel: { self.inChannel })
      // As in the app, the manager exists before activation is allowed (AppRuntime creates
      // it before NetworkActivationService starts), so its init connects nothing.
      allowed = false
      manager = NostrRelayManager(
        dependencies: dependencies, settings: settings, scheduler: clock, log: log)
      allowed = true
    }
  }

  static func event(_ n: Int) -> NostrEvent { NostrEvent(id: "e\(n)", content: "m\(n)") }

  @Test func noSocketOpensBeforeTorIsReady() {
    let rig = Rig()
    rig.manager.connect()
    rig.manager.sendEvent(Self.event(1))
    rig.clock.advanceTimers(by: 300)
    #expect(rig.session.requestedURLs.isEmpty)
    #expect(rig.waiter.waits == 1)  // one readiness wait for all queued connects
    #expect(rig.manager.queuedConnectionURLs.count == 4)
    rig.waiter.resolve(true)
    #expect(Set(rig.session.requestedURLs) == Set(NostrRelaySettings.builtInRelays))
    // The queued send flushed to every relay once connected.
    #expect(rig.manager.pendingSendCount == 0)
    #expect(rig.session.connections.allSatisfy { $0.sent.count == 1 })
  }

  @Test func withThePreferenceOffRelaysConnectWithoutWaiting() {
    let rig = Rig(torEnabled: false)
    rig.manager.connect()
    #expect(rig.waiter.waits == 0)
    #expect(rig.session.requestedURLs.count == 4)
  }

  @Test func failedWaitsRequeueUpToThreeThenReleaseParkedEOSE() {
    let rig = Rig()
    var eose = 0
    rig.manager.subscribe(id: "s", filterJSON: "{\"kinds\":[1059]}") { eose += 1 }
    rig.manager.sendEvent(Self.event(1))
    rig.waiter.resolve(false)
    rig.waiter.resolve(false)
    #expect(eose == 0)
    #expect(rig.waiter.waits == 3)
    rig.waiter.resolve(false)
    #expect(eose == 1)
    #expect(rig.session.requestedURLs.isEmpty)
    #expect(rig.manager.pendingSendCount == 1)  // sends kept
    #expect(rig.manager.pendingEOSECallbackCount == 0)
  }

  @Test func parkedEOSEFallsBackAfterTenSeconds() {
    let rig = Rig()
    var eose = 0
    rig.manager.subscribe(id: "s", filterJSON: "{}") { eose += 1 }
    rig.clock.advanceTimers(by: 9.9)
    #expect(eose == 0)
    rig.clock.advanceTimers(by: 0.2)
    #expect(eose == 1)
    rig.clock.advanceTimers(by: 100)
    #expect(eose == 1)
  }

  @Test func sendQueueIsCappedAt200OldestDropped() {
    let rig = Rig()
    for n in 0..<250 { rig.manager.sendEvent(Self.event(n)) }
    #expect(rig.manager.pendingSendCount == 200)
    #expect(rig.manager.droppedSendCount == 50)
    let dropped = rig.log.events(.message).filter { $0["phase"] == "dropped" }
    #expect(dropped.first?["id"] == "e0")
    #expect(dropped.last?["id"] == "e49")
  }

  @Test func sendEventImmediatelyFailsWhileTorIsNotReady() {
    let rig = Rig()
    var result: Bool?
    rig.manager.sendEventImmediately(Self.event(1)) { result = $0 }
    #expect(result == false)
    #expect(rig.manager.pendingSendCount == 0)
    #expect(rig.session.requestedURLs.isEmpty)
  }

  @Test func nothingConnectsWhileBackgroundedWithTorEnforced() {
    let rig = Rig(torReady: true)
    rig.foreground = false
    rig.manager.connect()
    #expect(rig.session.requestedURLs.isEmpty)
  }

  @Test func backoffDoublesWithJitterCapsAndStopsAfterTenAttempts() {
    let rig = Rig(torReady: true)
    rig.session.autoConnect = false
    rig.manager.ensureConnections(to: ["wss://r.example.com"])
    for _ in 0..<12 {
      guard let connection = rig.session.connections.last, !connection.cancelled else { break }
      connection.cancelled = true
      connection.fail(.connection("reset"))
      rig.clock.advanceTimers(by: 400)
    }
    let delays = rig.log.events(.relay).filter { $0["phase"] == "backoff" }.compactMap {
      event -> Double? in
      if case .double(let seconds) = event["delay"] { return seconds }
      return nil
    }
    #expect(rig.session.connections.count == 10)
    #expect(delays.count == 9)  // attempts 1...9 back off; the 10th gives up
    for (index, delay) in delays.enumerated() {
      let base = min(300, Double(1 << index))
      #expect(delay >= base * 0.8 && delay <= base * 1.2, "attempt \(index + 1): \(delay)")
    }
    #expect(rig.log.events(.relay).last?["phase"] == "failed")
    #expect(rig.manager.isPermanentlyFailed("wss://r.example.com"))
  }

  @Test func exhaustedRelaysStayFailedUntilTheCoolDown() {
    let rig = Rig(torReady: true)
    rig.session.autoConnect = false
    rig.manager.ensureConnections(to: ["wss://r.example.com"])
    for _ in 0..<10 {
      guard let connection = rig.session.connections.last, !connection.cancelled else { break }
      connection.cancelled = true
      connection.fail(.connection("reset"))
      rig.clock.advanceTimers(by: 301 * 1.2)
    }
    #expect(rig.session.connections.count == 10)
    rig.clock.advanceTimers(by: 0)
    #expect(rig.manager.isPermanentlyFailed("wss://r.example.com"))
    rig.manager.connect()
    #expect(rig.session.requestedURLs.filter { $0 == "wss://r.example.com" }.count == 10)
    rig.clock.advanceTimers(by: 600)
    #expect(!rig.manager.isPermanentlyFailed("wss://r.example.com"))
  }

  @Test(arguments: [NetworkFailure.dns("no such host"), .badServerResponse("403")])
  func dnsAndBadServerErrorsArePermanent(failure: NetworkFailure) {
    let rig = Rig(torReady: true)
    rig.manager.ensureConnections(to: ["wss://r.example.com"])
    rig.session.connections.last?.fail(failure)
    rig.clock.advanceTimers(by: 500)
    #expect(rig.session.requestedURLs.filter { $0 == "wss://r.example.com" }.count == 1)
    #expect(rig.manager.isPermanentlyFailed("wss://r.example.com"))
    rig.clock.advanceTimers(by: 100)
    #expect(!rig.manager.isPermanentlyFailed("wss://r.example.com"))
  }

  @Test func backoffDelayFormulaBounds() {
    #expect(RelayBackoff.delay(attempt: 1, jitterUnit: 0.5) == 1)
    #expect(RelayBackoff.delay(attempt: 1, jitterUnit: 0) == 0.8)
    #expect(abs(RelayBackoff.delay(attempt: 1, jitterUnit: 1) - 1.2) < 1e-9)
    #expect(RelayBackoff.delay(attempt: 9, jitterUnit: 0.5) == 256)
    #expect(RelayBackoff.delay(attempt: 10, jitterUnit: 0.5) == 300)
    #expect(RelayBackoff.delay(attempt: 30, jitterUnit: 0.5) == 300)
  }

  @Test func eventsAndEOSEFromARelay() {
    let rig = Rig(torReady: true)
    var eose = 0
    rig.manager.subscribe(id: "s", filterJSON: "{}", relayUrls: ["wss://r.example.com"]) {
      eose += 1
    }
    let connection = rig.session.connections[0]
    #expect(connection.sent == ["[\"REQ\",\"s\",{}]"])
    connection.events?(.message(NostrInbound.event(subscriptionID: "s", event: Self.event(9)).text))
    connection.events?(.message("[\"EOSE\",\"s\"]"))
    #expect(eose == 1)
    #expect(rig.manager.received.map(\.event.id) == ["e9"])
  }
}
