/// bitchat's NostrRelayManager, the parts that decide when a relay socket may open: connects
/// are fail-closed behind one Tor readiness wait (re-queued up to 3 waits, then parked EOSE
/// callbacks are released with "tor-unavailable" while queued sends stay); sends queue while
/// Tor is not ready (at most 200, oldest dropped); sendEventImmediately fails instead of
/// queueing; parked EOSE callbacks fall back after 10 s; reconnects back off 1 s x2 up to
/// 300 s with jitter 0.2 for 10 attempts; DNS and bad-server errors are permanent; failures
/// cool down after 600 s; nothing connects while backgrounded with Tor enforced.
@AppActor public final class NostrRelayManager: RelayConnectionControl {
  public struct Dependencies {
    public var activationAllowed: @AppActor () -> Bool
    /// bitchat's shouldUseTor: the preference, not live readiness.
    public var userTorEnabled: @AppActor () -> Bool
    public var torEnforced: Bool
    public var torIsReady: @AppActor () -> Bool
    public var torIsForeground: @AppActor () -> Bool
    public var awaitTorReady: @AppActor (@escaping @AppActor (Bool) -> Void) -> Void
    public var makeSession: @AppActor () -> NetworkSession
    public var jitterUnit: @AppActor () -> Double

    public init(
      activationAllowed: @escaping @AppActor () -> Bool,
      userTorEnabled: @escaping @AppActor () -> Bool, torEnforced: Bool,
      torIsReady: @escaping @AppActor () -> Bool, torIsForeground: @escaping @AppActor () -> Bool,
      awaitTorReady: @escaping @AppActor (@escaping @AppActor (Bool) -> Void) -> Void,
      makeSession: @escaping @AppActor () -> NetworkSession,
      jitterUnit: @escaping @AppActor () -> Double
    ) {
      self.activationAllowed = activationAllowed
      self.userTorEnabled = userTorEnabled
      self.torEnforced = torEnforced
      self.torIsReady = torIsReady
      self.torIsForeground = torIsForeground
      self.awaitTorReady = awaitTorReady
      self.makeSession = makeSession
      self.jitterUnit = jitterUnit
    }
  }

  public struct Relay: Equatable, Sendable {
    public let url: String
    public var isConnected = false
    public var reconnectAttempts = 0
    public var lastError: NetworkFailure?
    public var lastDisconnectedAt: Double?
    public var nextReconnectTime: Double?
  }

  struct PendingSend {
    var event: NostrEvent
    var pendingRelays: Set<String>
  }

  struct EOSETracker {
    var awaiting: Set<String>
    let callback: @AppActor () -> Void
    let epoch: Int
  }

  public private(set) var relays: [Relay] = []
  private var connections: [String: RelayConnection] = [:]
  private var pendingTorConnectionURLs: Set<String> = []
  private var awaitingTorForConnections = false
  private var torReadyWaitAttempts = 0
  private var connectionGeneration = 0
  private var messageQueue: [PendingSend] = []
  private var pendingSubscriptions: [String: [String: String]] = [:]
  private var subscriptionRequests: [String: (message: String, relays: Set<String>)] = [:]
  private var subscribed: [String: Set<String>] = [:]
  private var pendingEOSECallbacks: [String: @AppActor () -> Void] = [:]
  private var eoseTrackers: [String: EOSETracker] = [:]
  private var eoseEpoch = 0
  public private(set) var droppedSendCount = 0
  /// Events received on subscriptions, in order (for the driver and tests).
  public private(set) var received: [(subscription: String, event: NostrEvent)] = []

  private let dependencies: Dependencies
  private let settings: NostrRelaySettings
  private let scheduler: any AppScheduler
  private let log: AppEventLog
  public private(set) var defaultRelays: [String] = []
  /// bitchat's four built-in relays, or the harness's stand-ins for them.
  public let builtInRelays: [String]

  public init(
    dependencies: Dependencies, settings: NostrRelaySettings, scheduler: any AppScheduler,
    log: AppEventLog, builtInRelays: [String] = NostrRelaySettings.builtInRelays
  ) {
    self.builtInRelays = builtInRelays.compactMap { NostrRelayURL.normalized($0) }
    self.dependencies = dependencies
    self.settings = settings
    self.scheduler = scheduler
    self.log = log
    reloadDefaultRelays()
  }

  private var shouldUseTor: Bool { dependencies.userTorEnabled() }

  private var shouldWaitForTorBeforeConnecting: Bool {
    shouldUseTor && !dependencies.torIsReady()
  }

  public var pendingSendCount: Int { messageQueue.count }
  public var pendingEOSECallbackCount: Int { pendingEOSECallbacks.count }
  public var openConnectionURLs: [String] { connections.keys.sorted() }
  public var queuedConnectionURLs: Set<String> { pendingTorConnectionURLs }

  /// Built-ins then custom relays; the relay list follows (added ones appended).
  public func reloadDefaultRelays() {
    var seen = Set<String>()
    defaultRelays = (builtInRelays + settings.customRelays()).filter {
      seen.insert($0).inserted
    }
    var existing = Set(relays.map(\.url))
    for url in defaultRelays where !existing.contains(url) {
      relays.append(Relay(url: url))
      existing.insert(url)
    }
  }

  /// Adds a relay by hand and connects to it (NostrRelaySettings.didChangeNotification).
  public func addRelay(_ raw: String) -> Result<String, NostrRelaySettings.AddFailure> {
    let result = settings.add(raw, builtIn: Set(builtInRelays))
    switch result {
    case .success(let url):
      log.record(.relay, ["relay": .string(url), "phase": "added"])
      reloadDefaultRelays()
      if dependencies.activationAllowed() { ensureConnections(to: [url]) }
    case .failure(let failure):
      log.record(
        .relay, ["relay": .string(raw), "phase": "rejected", "error": .string("\(failure)")])
    }
    return result
  }

  // MARK: - Connect / disconnect

  public func connect() {
    guard dependencies.activationAllowed() else { return }
    connectToRelays(relays.map(\.url))
  }

  public func disconnect() {
    connectionGeneration &+= 1
    for (url, connection) in connections {
      connection.cancel()
      log.record(.relay, ["relay": .string(url), "phase": "disconnected"])
    }
    connections.removeAll()
    let now = scheduler.now
    for index in relays.indices {
      relays[index].isConnected = false
      relays[index].nextReconnectTime = nil
      relays[index].lastDisconnectedAt = now
    }
    subscribed.removeAll()
    pendingSubscriptions.removeAll()
    let trackers = eoseTrackers
    eoseTrackers.removeAll()
    for (_, tracker) in trackers { tracker.callback() }
    pendingTorConnectionURLs.removeAll()
    awaitingTorForConnections = false
    torReadyWaitAttempts = 0
  }

  public func resetAllConnections() {
    disconnect()
    connectionGeneration &+= 1
    // Every relay starts again with a clean backoff and no error.
    relays = relays.map { relay in
      var fresh = relay
      (fresh.reconnectAttempts, fresh.nextReconnectTime, fresh.lastError) = (0, nil, nil)
      return fresh
    }
    connect()
  }

  public func ensureConnections(to relayUrls: [String]) {
    guard dependencies.activationAllowed() else { return }
    let targets = allowedRelayList(from: relayUrls)
    guard !targets.isEmpty else { return }
    var existing = Set(relays.map(\.url))
    for url in targets where !existing.contains(url) {
      relays.append(Relay(url: url))
      existing.insert(url)
    }
    connectToRelays(targets)
  }

  private func allowedRelayList(from urls: [String]) -> [String] {
    var seen = Set<String>()
    return urls.compactMap { NostrRelayURL.normalized($0) }.filter { seen.insert($0).inserted }
  }

  private func connectToRelays(_ relayUrls: [String]) {
    guard dependencies.activationAllowed() else { return }
    let targets = allowedRelayList(from: relayUrls).filter {
      connections[$0] == nil && !isPermanentlyFailed($0)
    }
    guard !targets.isEmpty else { return }
    if shouldWaitForTorBeforeConnecting {
      queueConnectionsUntilTorReady(targets)
      return
    }
    for url in targets { connectToRelay(url) }
  }

  private func queueConnectionsUntilTorReady(_ relayUrls: [String]) {
    let targets = allowedRelayList(from: relayUrls).filter {
      connections[$0] == nil && !isPermanentlyFailed($0)
    }
    guard !targets.isEmpty else { return }
    for url in targets where !pendingTorConnectionURLs.contains(url) {
      log.record(.relay, ["relay": .string(url), "phase": "queued"])
    }
    pendingTorConnectionURLs.formUnion(targets)
    guard !awaitingTorForConnections else { return }
    awaitingTorForConnections = true
    let generation = connectionGeneration
    dependencies.awaitTorReady { ready in
      guard generation == self.connectionGeneration else { return }
      let pending = Array(self.pendingTorConnectionURLs).sorted()
      self.pendingTorConnectionURLs.removeAll()
      self.awaitingTorForConnections = false
      guard ready else {
        self.torReadyWaitAttempts += 1
        if self.torReadyWaitAttempts < RelayBackoff.torReadyMaxWaitAttempts {
          self.queueConnectionsUntilTorReady(pending)
        } else {
          // Still fail-closed, but callers waiting on EOSE are released; sends stay queued.
          self.torReadyWaitAttempts = 0
          self.unblockPendingEOSECallbacks(reason: "tor-unavailable")
        }
        return
      }
      self.torReadyWaitAttempts = 0
      self.connectToRelays(pending)
    }
  }

  private func connectToRelay(_ url: String) {
    // No connects while backgrounded with Tor enforced; foreground reconnects.
    if shouldUseTor && dependencies.torEnforced && !dependencies.torIsForeground() { return }
    if connections[url] != nil || isPermanentlyFailed(url) { return }
    if shouldWaitForTorBeforeConnecting {
      queueConnectionsUntilTorReady([url])
      return
    }
    let session = dependencies.makeSession()
    let task = session.webSocketTask(url)
    connections[url] = task
    log.record(
      .relay,
      ["relay": .string(url), "phase": "connecting", "via": .string(session.route.rawValue)])
    task.resume { [weak task] event in
      guard let task, self.connections[url] === task else { return }
      switch event {
      case .connected:
        self.log.record(.relay, ["relay": .string(url), "phase": "connected"])
        self.updateRelayStatus(url, isConnected: true, error: nil)
        self.flushPendingSubscriptions(for: url)
      case .message(let text):
        self.handleInbound(text, from: url)
      case .failed(let failure):
        self.handleDisconnection(relayUrl: url, error: failure)
      }
    }
  }

  // MARK: - Sending

  public func sendEvent(_ event: NostrEvent, to relayUrls: [String]? = nil) {
    guard dependencies.activationAllowed() else {
      log.record(
        .message, ["phase": "dropped", "id": .string(event.id), "reason": "not activated"])
      return
    }
    if shouldUseTor && dependencies.torEnforced && !dependencies.torIsReady() {
      // Fail-closed: queue locally, let connection setup wait for Tor.
      let targets = allowedRelayList(from: relayUrls ?? defaultRelays)
      guard !targets.isEmpty else { return }
      enqueuePendingSend(event, pendingRelays: Set(targets))
      ensureConnections(to: targets)
      return
    }
    let targets = allowedRelayList(from: relayUrls ?? defaultRelays)
    guard !targets.isEmpty else { return }
    ensureConnections(to: targets)
    var stillPending = Set<String>()
    for url in targets {
      if let connection = connectedConnection(url) {
        send(event, on: connection, relay: url)
      } else {
        stillPending.insert(url)
      }
    }
    if !stillPending.isEmpty { enqueuePendingSend(event, pendingRelays: stillPending) }
  }

  /// Sends only on relays connected now; completes false while Tor is not ready.
  public func sendEventImmediately(
    _ event: NostrEvent, to relayUrls: [String]? = nil,
    completion: @escaping @AppActor (Bool) -> Void
  ) {
    guard dependencies.activationAllowed() else { return completion(false) }
    guard !(shouldUseTor && dependencies.torEnforced && !dependencies.torIsReady()) else {
      return completion(false)
    }
    let connected = allowedRelayList(from: relayUrls ?? defaultRelays).compactMap { url in
      connectedConnection(url).map { (url, $0) }
    }
    guard !connected.isEmpty else { return completion(false) }
    for (url, connection) in connected { send(event, on: connection, relay: url) }
    completion(true)
  }

  private func connectedConnection(_ url: String) -> RelayConnection? {
    guard relays.first(where: { $0.url == url })?.isConnected == true else { return nil }
    return connections[url]
  }

  private func enqueuePendingSend(_ event: NostrEvent, pendingRelays: Set<String>) {
    messageQueue.append(PendingSend(event: event, pendingRelays: pendingRelays))
    log.record(.message, ["phase": "queued", "id": .string(event.id)])
    while messageQueue.count > RelayBackoff.pendingSendQueueCap {
      let dropped = messageQueue.removeFirst()
      droppedSendCount += 1
      log.record(.message, ["phase": "dropped", "id": .string(dropped.event.id)])
    }
  }

  private func send(_ event: NostrEvent, on connection: RelayConnection, relay url: String) {
    connection.send(NostrRequest.event(event).text) { ok in
      self.log.record(
        .message, ["phase": ok ? "sent" : "failed", "id": .string(event.id), "relay": .string(url)])
    }
  }

  private func flushMessageQueue(for url: String) {
    guard let connection = connections[url] else { return }
    for index in messageQueue.indices.reversed()
    where messageQueue[index].pendingRelays.contains(url) {
      send(messageQueue[index].event, on: connection, relay: url)
      messageQueue[index].pendingRelays.remove(url)
      if messageQueue[index].pendingRelays.isEmpty { messageQueue.remove(at: index) }
    }
  }

  // MARK: - Subscriptions

  public func subscribe(
    id: String, filterJSON: String, relayUrls: [String]? = nil,
    onEOSE: (@AppActor () -> Void)? = nil
  ) {
    let message = NostrRequest.subscribe(id: id, filterJSON: filterJSON).text
    let urls = allowedRelayList(from: relayUrls ?? defaultRelays).filter {
      !isPermanentlyFailed($0)
    }
    subscriptionRequests[id] = (message, Set(urls))
    var existing = Set(relays.map(\.url))
    for url in urls where !existing.contains(url) {
      relays.append(Relay(url: url))
      existing.insert(url)
    }
    for url in urls { pendingSubscriptions[url, default: [:]][id] = message }
    // No relay: end of stored events at once; Tor not ready yet: parked until it is;
    // otherwise tracked relay by relay.
    switch (onEOSE, urls.isEmpty, shouldWaitForTorBeforeConnecting) {
    case (let callback?, true, _): callback()
    case (let callback?, false, true): parkEOSECallbackUntilTorReady(id: id, callback: callback)
    case (let callback?, false, false):
      startEOSETracking(id: id, relays: Set(urls), callback: callback)
    case (nil, _, _): break
    }
    ensureConnections(to: urls)
    for url in urls where relays.first(where: { $0.url == url })?.isConnected == true {
      flushPendingSubscriptions(for: url)
    }
  }

  private func parkEOSECallbackUntilTorReady(id: String, callback: @escaping @AppActor () -> Void) {
    pendingEOSECallbacks[id] = callback
    let generation = connectionGeneration
    scheduler.schedule(after: RelayBackoff.eoseFallback) {
      guard generation == self.connectionGeneration else { return }
      guard let callback = self.pendingEOSECallbacks.removeValue(forKey: id) else { return }
      callback()
    }
  }

  private func unblockPendingEOSECallbacks(reason: String) {
    let parked = pendingEOSECallbacks
    if parked.isEmpty { return }
    pendingEOSECallbacks = [:]
    log.record(.relay, ["relay": "*", "phase": "eose-released", "error": .string(reason)])
    for id in parked.keys.sorted() { parked[id]?() }
  }

  private func startEOSETracking(
    id: String, relays: Set<String>, callback: @escaping @AppActor () -> Void
  ) {
    eoseEpoch += 1
    let epoch = eoseEpoch
    eoseTrackers[id] = EOSETracker(awaiting: relays, callback: callback, epoch: epoch)
    scheduler.schedule(after: RelayBackoff.eoseFallback) {
      guard let tracker = self.eoseTrackers[id], tracker.epoch == epoch else { return }
      self.eoseTrackers.removeValue(forKey: id)
      tracker.callback()
    }
  }

  private func flushPendingSubscriptions(for url: String) {
    guard let connection = connections[url] else { return }
    var toSend = pendingSubscriptions[url] ?? [:]
    for (id, request) in subscriptionRequests where request.relays.contains(url) {
      if toSend[id] == nil { toSend[id] = request.message }
    }
    for id in toSend.keys.sorted() where subscribed[url]?.contains(id) != true {
      if eoseTrackers[id] == nil, let callback = pendingEOSECallbacks.removeValue(forKey: id),
        let request = subscriptionRequests[id]
      {
        startEOSETracking(id: id, relays: request.relays, callback: callback)
      }
      connection.send(toSend[id]!) { ok in
        guard ok, self.connections[url] === connection else { return }
        self.subscribed[url, default: []].insert(id)
        self.pendingSubscriptions[url]?[id] = nil
      }
    }
  }

  private func handleInbound(_ text: String, from url: String) {
    guard let inbound = NostrInbound(text: text) else { return }
    switch inbound {
    case .event(let sub, let event):
      received.append((sub, event))
      log.record(
        .message,
        ["phase": "received", "id": .string(event.id), "relay": .string(url), "sub": .string(sub)])
    case .eose(let sub):
      if var tracker = eoseTrackers[sub] {
        tracker.awaiting.remove(url)
        if tracker.awaiting.isEmpty {
          eoseTrackers[sub] = nil
          tracker.callback()
        } else {
          eoseTrackers[sub] = tracker
        }
      }
    case .ok(let id, let accepted, _):
      log.record(
        .message,
        ["phase": accepted ? "accepted" : "rejected", "id": .string(id), "relay": .string(url)])
    case .notice:
      break
    }
  }

  // MARK: - Failures and backoff

  private func updateRelayStatus(_ url: String, isConnected: Bool, error: NetworkFailure?) {
    if let index = relays.firstIndex(where: { $0.url == url }) {
      relays[index].lastError = error
      relays[index].isConnected = isConnected
      if isConnected {
        relays[index].reconnectAttempts = 0
        relays[index].nextReconnectTime = nil
      } else {
        relays[index].lastDisconnectedAt = scheduler.now
      }
    }
    if isConnected { flushMessageQueue(for: url) }
  }

  private func handleDisconnection(relayUrl url: String, error: NetworkFailure) {
    connections[url] = nil
    subscribed[url] = nil
    updateRelayStatus(url, isConnected: false, error: error)
    for (id, var tracker) in eoseTrackers where tracker.awaiting.contains(url) {
      tracker.awaiting.remove(url)
      if tracker.awaiting.isEmpty {
        eoseTrackers[id] = nil
        tracker.callback()
      } else {
        eoseTrackers[id] = tracker
      }
    }
    guard dependencies.activationAllowed() else { return }
    guard let index = relays.firstIndex(where: { $0.url == url }) else { return }
    if error.isPermanentForRelays {
      relays[index].reconnectAttempts = RelayBackoff.maxAttempts
      relays[index].nextReconnectTime = nil
      pendingSubscriptions[url] = nil
      log.record(
        .relay, ["relay": .string(url), "phase": "permanent", "error": .string("\(error)")])
      return
    }
    relays[index].reconnectAttempts += 1
    let attempt = relays[index].reconnectAttempts
    guard attempt < RelayBackoff.maxAttempts else {
      log.record(.relay, ["relay": .string(url), "phase": "failed", "error": .string("\(error)")])
      return
    }
    let delay = RelayBackoff.delay(attempt: attempt, jitterUnit: dependencies.jitterUnit())
    relays[index].nextReconnectTime = scheduler.now + delay
    log.record(
      .relay,
      [
        "relay": .string(url), "phase": "backoff", "delay": .double(delay),
        "attempt": .int(attempt), "error": .string("\(error)"),
      ])
    let generation = connectionGeneration
    scheduler.schedule(after: delay) {
      guard generation == self.connectionGeneration else { return }
      if self.relays.contains(where: { $0.url == url }) { self.connectToRelay(url) }
    }
  }

  /// Permanently failed: out of attempts or a DNS/bad-server error, until 600 s after the
  /// last disconnect.
  public func isPermanentlyFailed(_ url: String) -> Bool {
    guard let relay = relays.first(where: { $0.url == url }) else { return false }
    if let last = relay.lastDisconnectedAt, scheduler.now - last >= RelayBackoff.failureCooldown {
      return false
    }
    if relay.reconnectAttempts >= RelayBackoff.maxAttempts { return true }
    return relay.lastError?.isPermanentForRelays ?? false
  }
}
