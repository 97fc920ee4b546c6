import FailClosedSupport
import Testing

@testable import SystemUnderTest

@Suite @AppActor struct AppRuntimeTests {
  @AppActor final class Rig {
    let clock = ManualClock()
    let log: AppEventLog
    let arti: SimulatedArti
    let box = SessionBox()
    let runtime: AppRuntime

    init(
      profile: SUTProfile = .bitchat, bootstrapSeconds: Double? = 5, values: [String: Any] = [:]
    ) {
      log = AppEventLog(clock: clock)
      arti = SimulatedArti(scheduler: clock, bootstrapSeconds: bootstrapSeconds)
      let box = self.box
      let configuration = AppRuntime.Configuration(
        profile: profile, backend: arti, probe: arti,
        makeTorSession: { box.make(.tor) }, makeDirectSession: { box.make(.direct) },
        store: KeyValueStore(values: values))
      runtime = AppRuntime(configuration: configuration, scheduler: clock, log: log)
    }

    var all: [FakeSession] { box.sessions }
    func requests(_ route: Route) -> [String] {
      all.filter { $0.route == route }.flatMap(\.requestedURLs)
    }
    var directoryURL: String { GeoRelayDirectory.defaultRemoteURL }
    func fetches(_ route: Route) -> [FakeFetch] {
      all.filter { $0.route == route }.flatMap(\.fetches)
    }
  }

  @AppActor final class SessionBox {
    var sessions: [FakeSession] = []
    var autoConnect = true
    func make(_ route: Route) -> FakeSession {
      let session = FakeSession(route: route)
      session.autoConnect = autoConnect
      sessions.append(session)
      return session
    }
  }

  @Test func nothingLeavesBeforeTorIsReadyThenEverythingGoesViaTor() {
    let rig = Rig(bootstrapSeconds: 30)
    rig.runtime.launch()
    rig.runtime.sendMessage("hello")
    rig.clock.advanceTimers(by: 1)
    rig.runtime.refreshDirectory()
    rig.clock.advanceTimers(by: 28)
    #expect(rig.requests(.tor).isEmpty)
    #expect(rig.requests(.direct).isEmpty)
    rig.clock.advanceTimers(by: 2)
    #expect(rig.runtime.tor.isReady)
    #expect(rig.requests(.direct).isEmpty)
    #expect(rig.requests(.tor).contains(rig.directoryURL))
    #expect(Set(rig.requests(.tor)).isSuperset(of: NostrRelaySettings.builtInRelays))
    #expect(rig.runtime.relays.pendingSendCount == 0)
  }

  /// AppRuntime.swift init touches GeoRelayDirectory.shared (its init prefetches, with the
  /// session of that moment, GeoRelayDirectory.swift makeFetchData) before AppRuntime.start()
  /// calls NetworkActivationService.start(); TorURLSession starts in Tor mode. With the
  /// preference off, the directory does not wait for Tor (persistedTorPreference), so its first
  /// fetch goes to the Tor session, which has no Tor behind it; the retry 60 s later goes
  /// direct. Relays go direct at once (issue 14, item 3).
  @Test func preferenceOffTheFirstDirectoryFetchUsesTheNotYetSwitchedTorSession() {
    let rig = Rig(values: [NetworkActivationService.torPreferenceKey: false])
    rig.runtime.launch()
    #expect(rig.arti.starts == 0)
    #expect(Set(rig.requests(.direct)).isSuperset(of: NostrRelaySettings.builtInRelays))
    #expect(rig.requests(.tor) == [rig.directoryURL])
    #expect(!rig.requests(.direct).contains(rig.directoryURL))
    rig.fetches(.tor).first?.finish(.failure(.connection("SOCKS 127.0.0.1:39050 refused")))
    rig.clock.advanceTimers(by: 59.9)
    #expect(!rig.requests(.direct).contains(rig.directoryURL))
    rig.clock.advanceTimers(by: 0.2)
    #expect(rig.requests(.direct).contains(rig.directoryURL))
    #expect(rig.requests(.tor) == [rig.directoryURL])
  }

  /// The hardened profile gates the directory on activation, so its launch starts activation
  /// first: with the preference off the first fetch goes direct, the user's choice.
  @Test func hardenedStartsActivationBeforeTheDirectory() {
    let rig = Rig(profile: .hardened, values: [NetworkActivationService.torPreferenceKey: false])
    rig.runtime.launch()
    rig.clock.advanceTimers(by: 0)
    #expect(rig.requests(.direct).contains(rig.directoryURL))
    #expect(rig.requests(.tor).isEmpty)
  }

  /// GeoRelayDirectory.swift registerObservers: on iOS's didBecomeActiveNotification a
  /// prefetch, not forced, a main-actor hop later: a fetch when no success within 24 h, none
  /// after a recent one; a success posts geoRelayDirectoryDidRefresh (handleFetchSuccess).
  @Test func becomingActivePrefetchesUnlessRecentlyRefreshedAndASuccessIsPosted() {
    let rig = Rig(values: [NetworkActivationService.torPreferenceKey: false])
    rig.runtime.launch()
    rig.fetches(.tor).first?.finish(.failure(.connection("refused")))
    rig.clock.advanceTimers(by: 10)
    rig.runtime.enterBackground()
    rig.runtime.enterForeground()
    #expect(!rig.requests(.direct).contains(rig.directoryURL))
    rig.clock.advanceTimers(by: 0)
    #expect(rig.requests(.direct).contains(rig.directoryURL))
    let csv =
      (["relay url,latitude,longitude"] + (0..<60).map { "relay\($0).example.com,1,2" })
      .joined(separator: "\n")
    rig.fetches(.direct).last?.respond(csv)
    #expect(rig.runtime.directory.entries.count == 60)
    #expect(
      rig.log.events(.notification).contains { $0["name"] == "geoRelayDirectoryDidRefresh" })
    let fetched = rig.fetches(.direct).count
    rig.runtime.enterBackground()
    rig.runtime.enterForeground()
    rig.clock.advanceTimers(by: 1)
    #expect(rig.fetches(.direct).count == fetched)
  }

  /// Weakness 2: activation turns off while Tor is ready; the proxy goes direct at once but
  /// readiness clears only after arti_stop, so a directory fetch in between goes out in clear.
  @Test(arguments: [SUTProfile.bitchat, .hardened])
  func weakness2DirectoryLeakWindow(profile: SUTProfile) {
    let rig = Rig(profile: profile)
    rig.runtime.launch()
    rig.clock.advanceTimers(by: 6)
    #expect(rig.runtime.tor.isReady)
    for fetch in rig.fetches(.tor) { fetch.finish(.failure(.timedOut)) }
    rig.runtime.activation.setLocationPermission(authorized: false)
    #expect(!rig.runtime.urlSession.useTorProxy)
    #expect(rig.runtime.tor.isReady)  // not yet cleared: arti_stop takes 200 ms
    rig.runtime.refreshDirectory()
    rig.clock.advanceTimers(by: 1)
    #expect(!rig.runtime.tor.isReady)
    let leaked = rig.requests(.direct).contains(rig.directoryURL)
    #expect(leaked == (profile == .bitchat))
  }

  /// Weakness 4: rebuild() leaves the old session's tasks running.
  @Test(arguments: [SUTProfile.bitchat, .hardened])
  func weakness4RebuildDoesNotCancelOldTasks(profile: SUTProfile) {
    let rig = Rig(profile: profile, values: [NetworkActivationService.torPreferenceKey: false])
    rig.runtime.launch()
    // The launch's directory fetch, still in flight: on the Tor session in bitchat (it starts
    // before activation switches the session, item 3), on the direct one in hardened.
    let inFlight = (rig.fetches(.direct) + rig.fetches(.tor)).first { $0.url == rig.directoryURL }
    #expect(inFlight != nil)
    rig.runtime.activation.setUserTorEnabled(true)
    #expect(rig.runtime.urlSession.useTorProxy)
    #expect(inFlight?.cancelled == (profile == .hardened))
  }

  @Test func backgroundMarksNotReadyAndForegroundRestartsRebuildsAndReconnects() {
    let rig = Rig()
    rig.runtime.launch()
    rig.clock.advanceTimers(by: 6)
    let connectionsBefore = rig.requests(.tor).count
    rig.runtime.enterBackground()
    rig.clock.advanceTimers(by: 1)
    #expect(!rig.runtime.tor.isReady)
    #expect(rig.arti.stops == 0)
    #expect(rig.runtime.relays.openConnectionURLs.isEmpty)
    rig.runtime.sendMessage("while away")
    rig.clock.advanceTimers(by: 30)
    #expect(rig.requests(.tor).count == connectionsBefore)
    let rebuilds = rig.runtime.urlSession.rebuildCount
    rig.runtime.enterForeground()
    rig.clock.advanceTimers(by: 10)
    #expect(rig.log.notificationNames.contains("TorWillRestart"))
    #expect(rig.runtime.tor.isReady)
    #expect(rig.runtime.urlSession.rebuildCount == rebuilds + 1)
    #expect(rig.runtime.relays.openConnectionURLs.count == 4)
    #expect(rig.runtime.relays.pendingSendCount == 0)
  }

  /// AppRuntime.swift (iOS), handleScenePhaseChange `.active`: only a return from background
  /// with auto-start allowed restarts Tor and rebuilds the sessions; a foreground without a
  /// background before it (the launch's own, or a repeated one) changes nothing, and neither
  /// does any foreground while network activation is not allowed.
  @Test func foregroundRebuildsOnlyOnAReturnFromBackground() {
    let rig = Rig(profile: .bitchat)
    rig.runtime.launch()
    rig.clock.advanceTimers(by: 6)
    let rebuilds = rig.runtime.urlSession.rebuildCount
    rig.runtime.enterForeground()
    rig.clock.advanceTimers(by: 5)
    #expect(rig.runtime.urlSession.rebuildCount == rebuilds)
    rig.runtime.enterBackground()
    rig.clock.advanceTimers(by: 1)
    rig.runtime.enterForeground()
    rig.clock.advanceTimers(by: 10)
    #expect(rig.runtime.urlSession.rebuildCount == rebuilds + 1)
    // A second foreground with no background between: no second rebuild.
    rig.runtime.enterForeground()
    rig.clock.advanceTimers(by: 10)
    #expect(rig.runtime.urlSession.rebuildCount == rebuilds + 1)
    // Activation not allowed: background then foreground leaves Tor dormant.
    rig.runtime.activation.setLocationPermission(authorized: false)
    rig.clock.advanceTimers(by: 1)
    let afterRevoke = rig.runtime.urlSession.rebuildCount
    rig.runtime.enterBackground()
    rig.runtime.enterForeground()
    rig.clock.advanceTimers(by: 10)
    #expect(rig.runtime.urlSession.rebuildCount == afterRevoke)
    #expect(!rig.runtime.tor.isReady)
  }

  @Test func weakness3OnionRelayAcceptedButUnreachableInBitchat() {
    let onion = "wss://abcdefghijklmnopqrstuvwxyz234567abcdefghijklmnopqrstuvwx.onion"
    let bitchat = Rig(profile: .bitchat)
    bitchat.runtime.launch()
    #expect((try? bitchat.runtime.relays.addRelay(onion).get()) == onion)
    let hardened = Rig(profile: .hardened)
    hardened.runtime.launch()
    #expect(hardened.runtime.relays.addRelay(onion) == .failure(.onionUnsupported))
  }
}
