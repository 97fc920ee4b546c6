import FailClosedSupport
import Foundation
import Testing

@testable import SystemUnderTest

@Suite @AppActor struct NetworkActivationServiceTests {
  @AppActor final class Rig {
    let tor: TorRig
    let store: KeyValueStore
    let recorder = CallRecorder()
    let service: NetworkActivationService

    init(values: [String: Any] = [:], permission: Bool = true, bootstrapSeconds: Double? = 5) {
      tor = TorRig(bootstrapSeconds: bootstrapSeconds)
      store = KeyValueStore(values: values)
      service = NetworkActivationService(
        store: store, tor: tor.tor, scheduler: tor.clock, bus: tor.bus, log: tor.log,
        locationPermissionAuthorized: permission)
      service.attach(proxy: recorder, relays: recorder)
    }
  }

  /// NetworkActivationService.swift line 124: `object(forKey:) as? Bool ?? true`. UserDefaults
  /// returns numbers as NSNumber, which bridges to Bool for exactly 0 and 1: a stored 0 is off,
  /// 1 on; 2, a string or nothing stored keep Tor on (TorPreferenceReadTests, bitchat's own).
  @Test func preferenceDefaultsOnAndReadsThroughNSNumbersBoolBridging() throws {
    let key = NetworkActivationService.torPreferenceKey
    #expect(key == "networkActivationService.userTorEnabled")
    #expect(NetworkActivationService.persistedTorPreference(in: KeyValueStore()))
    #expect(!NetworkActivationService.persistedTorPreference(in: KeyValueStore(values: [key: 0])))
    #expect(NetworkActivationService.persistedTorPreference(in: KeyValueStore(values: [key: 1])))
    #expect(NetworkActivationService.persistedTorPreference(in: KeyValueStore(values: [key: 2])))
    #expect(NetworkActivationService.persistedTorPreference(in: KeyValueStore(values: [key: "no"])))
    #expect(
      !NetworkActivationService.persistedTorPreference(in: KeyValueStore(values: [key: false])))
    // Through a JSON file, as the driver persists it.
    let path = NSTemporaryDirectory() + "failclosed-prefs-\(UUID().uuidString).json"
    defer { try? FileManager.default.removeItem(atPath: path) }
    try Data(#"{"networkActivationService.userTorEnabled": 0}"#.utf8).write(
      to: URL(fileURLWithPath: path))
    #expect(!NetworkActivationService.persistedTorPreference(in: try KeyValueStore(path: path)))
    try Data(#"{"networkActivationService.userTorEnabled": 7}"#.utf8).write(
      to: URL(fileURLWithPath: path))
    #expect(NetworkActivationService.persistedTorPreference(in: try KeyValueStore(path: path)))
    try Data(#"{"networkActivationService.userTorEnabled": false}"#.utf8).write(
      to: URL(fileURLWithPath: path))
    #expect(!NetworkActivationService.persistedTorPreference(in: try KeyValueStore(path: path)))
  }

  @Test func startWithActivationAllowedStartsTorInBitchatsOrder() {
    let rig = Rig()
    rig.service.start()
    #expect(rig.recorder.calls == ["setProxyMode(true)", "relays.connect"])
    #expect(rig.tor.tor.allowAutoStart)
    #expect(rig.tor.notifications("TorWillStart") == 1)
    // setAutoStartAllowed, then proxy, then start, then relays: in the event log.
    let fields = rig.tor.log.events.map { ($0["field"] ?? $0["name"])?.description ?? "" }
    let order = ["allowAutoStart", "TorWillStart"].map { fields.firstIndex(of: $0) ?? -1 }
    #expect(order[0] >= 0 && order[0] < order[1])
  }

  @Test func activationNotAllowedMeansDirectEvenWithPreferenceOn() {
    let rig = Rig(permission: false)
    rig.service.start()
    #expect(rig.recorder.proxyModes == [false])
    #expect(!rig.service.activationAllowed)
    #expect(rig.service.userTorEnabled)
    #expect(rig.tor.arti.starts == 0)
    #expect(rig.recorder.calls.last == "relays.disconnect")
  }

  @Test func mutualFavouritesOrALocationChannelAllowActivation() {
    let rig = Rig(permission: false)
    rig.service.start()
    rig.service.setMutualFavorites(true)
    #expect(rig.service.activationAllowed)
    rig.service.setMutualFavorites(false)
    #expect(!rig.service.activationAllowed)
    rig.service.setInLocationChannel(true)
    #expect(rig.service.activationAllowed)
    #expect(rig.recorder.proxyModes == [false, true, false, true])
  }

  @Test func turningThePreferenceOffPersistsPostsAndGoesDirect() {
    let rig = Rig()
    rig.service.start()
    rig.tor.advance(6)
    #expect(rig.tor.tor.isReady)
    rig.recorder.calls = []
    rig.service.setUserTorEnabled(false)
    #expect(rig.store.object(forKey: NetworkActivationService.torPreferenceKey) as? Bool == false)
    #expect(rig.tor.log.notificationNames.last == "TorUserPreferenceChanged")
    #expect(rig.tor.log.events(.notification).last?["enabled"] == .bool(false))
    #expect(
      rig.recorder.calls == ["setProxyMode(false)", "relays.disconnect", "relays.connect"])
    // Readiness clears only after arti_stop (200 ms) returns.
    #expect(rig.tor.tor.isReady)
    rig.tor.advance(0.3)
    #expect(!rig.tor.tor.isReady)
    #expect(rig.tor.arti.stops == 1)
    // Setting the same value again does nothing.
    rig.service.setUserTorEnabled(false)
    #expect(rig.tor.log.notificationNames.filter { $0 == "TorUserPreferenceChanged" }.count == 1)
  }

  @Test func reachabilityIsDebouncedTwoAndAHalfSeconds() {
    let rig = Rig()
    rig.service.start()
    rig.tor.advance(6)
    rig.service.pathUpdated(satisfied: false)
    rig.tor.advance(2.4)
    rig.service.pathUpdated(satisfied: true)
    rig.tor.advance(5)
    #expect(rig.service.activationAllowed)
    rig.service.pathUpdated(satisfied: false)
    rig.tor.advance(2.4)
    #expect(rig.service.activationAllowed)
    rig.tor.advance(0.2)
    #expect(!rig.service.activationAllowed)
    #expect(!rig.service.reachable)
    #expect(rig.recorder.proxyModes.last == false)
    rig.tor.advance(1)
    #expect(!rig.tor.tor.isReady)
    rig.service.pathUpdated(satisfied: true)
    rig.tor.advance(2.6)
    #expect(rig.service.activationAllowed)
    #expect(rig.recorder.proxyModes.last == true)
  }

  /// NetworkReachabilityMonitor.swift, ReachabilityDebounce: the pending change keeps the time
  /// it was first reported, so reports of the same value every second do not push the commit
  /// out (the old model restarted the window on each and never committed); a report of the
  /// committed value cancels it.
  @Test func repeatedReportsKeepTheFirstDeadlineAndTheCommittedValueCancels() {
    let rig = Rig()
    rig.service.start()
    rig.tor.advance(6)
    rig.service.pathUpdated(satisfied: false)
    for _ in 0..<2 {
      rig.tor.advance(1)
      rig.service.pathUpdated(satisfied: false)
    }
    #expect(rig.service.activationAllowed)
    rig.tor.advance(0.6)
    #expect(!rig.service.reachable)
    #expect(!rig.service.activationAllowed)
    // Flapping: false then true again within the window never commits.
    rig.service.pathUpdated(satisfied: true)
    rig.tor.advance(1)
    rig.service.pathUpdated(satisfied: false)
    rig.tor.advance(5)
    #expect(!rig.service.reachable)
  }

  @Test func revokingPermissionShutsTorDownAndDisconnectsRelays() {
    let rig = Rig()
    rig.service.start()
    rig.tor.advance(6)
    rig.recorder.calls = []
    rig.service.setLocationPermission(authorized: false)
    #expect(rig.recorder.calls == ["setProxyMode(false)", "relays.disconnect"])
    #expect(!rig.tor.tor.allowAutoStart)
    rig.tor.advance(1)
    #expect(rig.tor.arti.stops == 1)
    #expect(!rig.tor.tor.isReady)
  }

  /// NetworkActivationService.swift stopForPanic: the synchronous panic stop. Activation off,
  /// the relays disconnected, Tor's auto-start withdrawn, the proxy direct and Tor shut down;
  /// later inputs change nothing until start() runs again (issue 14, item 10).
  @Test func stopForPanicStopsEverythingUntilStartRunsAgain() {
    let rig = Rig()
    rig.service.start()
    rig.tor.clock.advanceTimers(by: 6)
    #expect(rig.tor.tor.isReady)
    rig.recorder.calls.removeAll()
    rig.service.stopForPanic()
    #expect(!rig.service.activationAllowed)
    #expect(rig.recorder.calls == ["relays.disconnect", "setProxyMode(false)"])
    #expect(!rig.tor.tor.allowAutoStart)
    rig.tor.clock.advanceTimers(by: 1)
    #expect(!rig.tor.tor.isReady)
    rig.service.setMutualFavorites(true)
    rig.service.pathUpdated(satisfied: false)
    rig.tor.clock.advanceTimers(by: 5)
    #expect(rig.recorder.calls == ["relays.disconnect", "setProxyMode(false)"])
    // The reachability monitor is stopped too: that path report was never heard.
    rig.service.start()
    #expect(rig.service.activationAllowed)
    #expect(rig.recorder.calls.suffix(2) == ["setProxyMode(true)", "relays.connect"])
  }
}
