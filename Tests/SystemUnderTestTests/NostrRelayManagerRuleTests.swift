import Testing

@testable import SystemUnderTest

/// NostrRelayManager's rules from issue 14's items 6-10, each against the rule in
/// bitchat/Nostr/NostrRelayManager.swift and TransportConfig.swift at the pinned commit.
@Suite @AppActor struct NostrRelayManagerRuleTests {
  typealias Rig = NostrRelayManagerTests.Rig
  static func event(_ n: Int) -> NostrEvent { NostrEvent(id: "e\(n)", content: "m\(n)") }
  static let relay = "wss://r.example.com"

  // MARK: - Item 6: subscribe()

  /// subscribe(): `guard dependencies.activationAllowed() else { return }`: nothing queued and
  /// the EOSE callback never fires.
  @Test func subscribeIsDroppedWhileActivationIsOff() {
    let rig = Rig(torReady: true)
    rig.allowed = false
    var eose = 0
    rig.manager.subscribe(id: "s", filterJSON: "{}", relayUrls: [Self.relay]) { eose += 1 }
    rig.clock.advanceTimers(by: 100)
    #expect(eose == 0)
    #expect(rig.manager.queuedSubscriptionCount == 0)
    #expect(rig.session.requestedURLs.isEmpty)
  }

  /// subscribe(): a request for the same id within subscribeCoalesceInterval (1.0 s) of the
  /// last is ignored, whatever its filter.
  @Test func aRepeatWithinOneSecondIsCoalesced() {
    let rig = Rig(torReady: true)
    rig.session.autoConnect = false
    rig.manager.subscribe(id: "s", filterJSON: "{\"kinds\":[1]}", relayUrls: [Self.relay])
    rig.clock.advanceTimers(by: 0.9)
    rig.manager.subscribe(id: "s", filterJSON: "{\"kinds\":[2]}", relayUrls: [Self.relay])
    let connection = rig.session.connections[0]
    connection.events?(.connected)
    #expect(connection.sent == ["[\"REQ\",\"s\",{\"kinds\":[1]}]"])
    // Past the window the request counts again (here for a second relay, which gets it).
    rig.clock.advanceTimers(by: 0.2)
    let second = "wss://second.example.com"
    rig.manager.subscribe(id: "s", filterJSON: "{\"kinds\":[2]}", relayUrls: [second])
    let other = rig.session.connections.first { $0.url == second }!
    other.events?(.connected)
    #expect(other.sent == ["[\"REQ\",\"s\",{\"kinds\":[2]}]"])
  }

  /// queuePendingSubscription: at most nostrPendingSubscriptionsPerRelayCap (64) queued REQs
  /// per relay, the oldest by insertion evicted.
  @Test func atMost64QueuedPerRelayOldestEvicted() {
    let rig = Rig()
    for n in 0..<70 {
      rig.manager.subscribe(id: "s\(n)", filterJSON: "{}", relayUrls: [Self.relay])
    }
    let queued = rig.manager.queuedSubscriptionIDs(for: Self.relay)
    #expect(queued.count == 64)
    #expect(!queued.contains("s5"))
    #expect(queued.contains("s6"))
    #expect(queued.contains("s69"))
  }

  /// sweepStalePendingSubscriptions: queued REQs older than
  /// nostrPendingSubscriptionTTLSeconds (600 s) go on the next connect attempt.
  @Test func queuedSubscriptionsExpireAfter600sAtTheNextConnectAttempt() {
    let rig = Rig()
    rig.manager.subscribe(id: "s", filterJSON: "{}", relayUrls: [Self.relay])
    rig.clock.advanceTimers(by: 599)
    rig.manager.connect()
    #expect(rig.manager.queuedSubscriptionIDs(for: Self.relay) == ["s"])
    rig.clock.advanceTimers(by: 2)
    #expect(rig.manager.queuedSubscriptionIDs(for: Self.relay) == ["s"])  // no attempt yet
    rig.manager.connect()
    #expect(rig.manager.queuedSubscriptionCount == 0)
  }

  /// EOSETracker.isComplete: done when every relay that received the REQ answered, provided
  /// one did; a relay still connecting does not hold the callback until the 10 s fallback.
  @Test func eoseCompletesOnTheRelaysTheREQReached() {
    let rig = Rig(torReady: true)
    rig.session.autoConnect = false
    var eose = 0
    let other = "wss://slow.example.com"
    rig.manager.subscribe(id: "s", filterJSON: "{}", relayUrls: [Self.relay, other]) { eose += 1 }
    let fast = rig.session.connections.first { $0.url == Self.relay }!
    fast.events?(.connected)
    #expect(eose == 0)
    fast.events?(.message("[\"EOSE\",\"s\"]"))
    #expect(eose == 1)
    rig.clock.advanceTimers(by: 20)
    #expect(eose == 1)
  }

  // MARK: - Item 7: the default-relay policy

  /// applyDefaultRelayPolicy: the default relays (built-in and added by hand) are targets only
  /// with a mutual favourite, location permission or a location channel; otherwise
  /// dropRelays closes them and forgets queued sends addressed only to them.
  @Test func defaultRelaysAreDroppedWithTheirQueuedSendsWithoutFavouriteLocationOrChannel() {
    let rig = Rig()
    rig.manager.sendEvent(Self.event(1))
    #expect(rig.manager.pendingSendCount == 1)
    #expect(rig.manager.queuedConnectionURLs.count == 4)
    rig.permission = false
    rig.manager.activationInputsChanged()
    #expect(rig.manager.relays.isEmpty)
    #expect(rig.manager.pendingSendCount == 0)
    #expect(rig.manager.queuedConnectionURLs.isEmpty)
    rig.waiter.resolve(true)
    #expect(rig.session.requestedURLs.isEmpty)
    rig.manager.sendEvent(Self.event(2))
    #expect(rig.manager.pendingSendCount == 0)  // no target: nothing queued
    // A location channel alone lets them back, and they connect (activation allowed).
    rig.inChannel = true
    rig.manager.activationInputsChanged()
    #expect(rig.manager.relays.count == 4)
    #expect(Set(rig.session.requestedURLs) == Set(NostrRelaySettings.builtInRelays))
  }

  @Test func openSocketsToDefaultRelaysCloseWhenThePolicyTurnsOff() {
    let rig = Rig(torReady: true)
    rig.manager.connect()
    #expect(rig.session.connections.count == 4)
    rig.permission = false
    rig.manager.activationInputsChanged()
    #expect(rig.session.connections.allSatisfy { $0.cancelled })
    #expect(rig.manager.openConnectionURLs.isEmpty)
    // A relay that is not a default one stays a target.
    rig.manager.ensureConnections(to: [Self.relay])
    #expect(rig.session.requestedURLs.last == Self.relay)
  }

  // MARK: - Item 8: sendEventImmediately waits for the relay's OK

  /// sendEventImmediately: true only on a relay's NIP-01 OK accepting the event; a write alone
  /// is not acceptance.
  @Test func sendEventImmediatelySucceedsOnTheFirstAcceptingOK() {
    let rig = Rig(torReady: true)
    rig.manager.connect()
    var result: Bool?
    rig.manager.sendEventImmediately(Self.event(1)) { result = $0 }
    #expect(result == nil)
    #expect(rig.session.connections.allSatisfy { $0.sent.count == 1 })
    let (first, second) = (rig.session.connections[0], rig.session.connections[1])
    first.events?(.message("[\"OK\",\"e1\",false,\"blocked\"]"))
    #expect(result == nil)
    second.events?(.message("[\"OK\",\"e1\",true,\"\"]"))
    #expect(result == true)
  }

  /// resolveConfirmedSend/timeoutConfirmedSend: false when every relay rejected it (a dropped
  /// relay counts as one), or when nostrConfirmedSendAckTimeoutSeconds (10 s) pass without OK.
  @Test func sendEventImmediatelyFailsOnRejectionsOrAfterTenSeconds() {
    let rig = Rig(torReady: true)
    rig.manager.connect()
    var rejected: Bool?
    rig.manager.sendEventImmediately(Self.event(1)) { rejected = $0 }
    for (index, connection) in rig.session.connections.enumerated() {
      if index == 0 {
        connection.fail(.connection("reset"))
      } else {
        connection.events?(.message("[\"OK\",\"e1\",false,\"no\"]"))
      }
    }
    #expect(rejected == false)
    var silent: Bool?
    rig.manager.sendEventImmediately(Self.event(2)) { silent = $0 }
    rig.clock.advanceTimers(by: 9.9)
    #expect(silent == nil)
    rig.clock.advanceTimers(by: 0.2)
    #expect(silent == false)
    var cut: Bool?
    rig.manager.sendEventImmediately(Self.event(3)) { cut = $0 }
    rig.manager.disconnect()
    #expect(cut == false)
  }

  // MARK: - Item 10: connectToRelay checks activation

  /// connectToRelay: `guard dependencies.activationAllowed()`: a reconnect scheduled before
  /// activation went off opens nothing.
  @Test func aScheduledReconnectOpensNothingOnceActivationIsOff() {
    let rig = Rig(torReady: true)
    rig.manager.ensureConnections(to: [Self.relay])
    rig.session.connections[0].fail(.connection("reset"))
    rig.allowed = false
    rig.clock.advanceTimers(by: 5)
    #expect(rig.session.requestedURLs == [Self.relay])
  }
}
