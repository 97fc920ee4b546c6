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

  @Test func preferenceOffGoesDirectAtOnce() {
    let rig = Rig(values: [NetworkActivationService.torPreferenceKey: false])
    rig.runtime.launch()
    #expect(rig.arti.starts == 0)
    #expect(Set(rig.requests(.direct)).isSuperset(of: NostrRelaySettings.builtInRelays))
    #expect(rig.requests(.direct).contains(rig.directoryURL))
    #expect(rig.requests(.tor).isEmpty)
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
    let directFetch = rig.fetches(.direct).first { $0.url == rig.directoryURL }
    #expect(directFetch != nil)
    rig.runtime.activation.setUserTorEnabled(true)
    #expect(rig.runtime.urlSession.useTorProxy)
    #expect(directFetch?.cancelled == (profile == .hardened))
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
