/// bitchat's NostrRelayManager, the parts that decide when a relay socket may open: connects
/// are fail-closed behind one Tor readiness wait (re-queued up to 3 waits, then parked EOSE
/// callbacks are released with "tor-unavailable" while queued sends stay); sends queue while
/// Tor is not ready (at most 200, oldest dropped); sendEventImmediately fails instead of
/// queueing; parked EOSE callbacks fall back after 10 s; reconnects back off 1 s x2 up to
/// 300 s with jitter 0.2 for 10 attempts; DNS and bad-server errors are permanent; failures
/// cool down after 600 s; nothing connects while backgrounded with Tor enforced.
/// The default relays (built-in and added) are only targets while there is a mutual
/// favourite, location permission or an open location channel; without one they are
/// dropped with their queued sends (applyDefaultRelayPolicy). Subscriptions: nothing while
/// activation is off, a repeat of an id within 1 s is coalesced, at most 64 queued per relay
/// (oldest evicted), queued ones older than 600 s swept on each connect attempt.
/// sendEventImmediately succeeds only on a relay's NIP-01 OK, within 10 s.
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
    /// The default-relay policy's inputs (NostrRelayManagerDependencies).
    public var hasMutualFavorites: @AppActor () -> Bool
    public var hasLocationPermission: @AppActor () -> Bool
    public var isInLocationChannel: @AppActor () -> Bool

    public init(
      activationAllowed: @escaping @AppActor () -> Bool,
      userTorEnabled: @escaping @AppActor () -> Bool, torEnforced: Bool,
      torIsReady: @escaping @AppActor () -> Bool, torIsForeground: @escaping @AppActor () -> Bool,
      awaitTorReady: @escaping @AppActor (@escaping @AppActor (Bool) -> Void) -> Void,
      makeSession: @escaping @AppActor () -> NetworkSession,
      jitterUnit: @escaping @AppActor () -> Double,
      hasMutualFavorites: @escaping @AppActor () -> Bool = { false },
      hasLocationPermission: @escaping @AppActor () -> Bool = { true },
      isInLocationChannel: @escaping @AppActor () -> Bool = { false }
    ) {
      self.hasMutualFavorites = hasMutualFavorites
      self.hasLocationPermission = hasLocationPermission
      self.isInLocationChannel = isInLocationChannel
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

  /// Completion is scoped to relays the REQ reached: a relay still connecting does not hold
  /// the callback once every relay that got the REQ has answered (or all targets dropped).
  struct EOSETracker {
    var notYetSent: Set<String>
    var waitingForEOSE: Set<String> = []
    var reachedAny = false
    let callback: @AppActor () -> Void
    let epoch: Int

    var isDone: Bool {
      waitingForEOSE.isEmpty && (reachedAny || notYetSent.isEmpty)
    }
  }

  /// A queued REQ: its text, when it was queued, and its place in the queue.
  struct QueuedSubscription {
    var message: String
    var queuedAt: Double
    var order: UInt64
  }

  /// A sendEventImmediately waiting for a relay's OK.
  struct ConfirmedSend {
    let token: Int
    var relays: Set<String>
    let completion: @AppActor (Bool) -> Void
  }

  public private(set) var relays: [Relay] = []
  private var connections: [String: RelayConnection] = [:]
  private var pendingTorConnectionURLs: Set<String> = []
  private var awaitingTorForConnections = false
  private var torReadyWaitAttempts = 0
  private var connectionGeneration = 0
  private var messageQueue: [PendingSend] = []
  private var pendingSubscriptions: [String: [String: QueuedSubscription]] = [:]
  private var queuedSubscriptionCounter: UInt64 = 0
  private var lastSubscribeAt: [String: Double] = [:]
  private var confirmedSends: [String: ConfirmedSend] = [:]
  private var confirmedSendCounter = 0
  private var defaultRelaysAllowed = false
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
    applyDefaultRelayPolicy(force: true)
  }

  /// Subscription and confirmed-send constants (TransportConfig.swift).
  public nonisolated static let subscribeCoalesceInterval = 1.0
  public nonisolated static let queuedSubscriptionsPerRelay = 64
  public nonisolated static let queuedSubscriptionLifetime = 600.0
  public nonisolated static let confirmedSendTimeout = 10.0

  public var queuedSubscriptionCount: Int { pendingSubscriptions.values.map(\.count).reduce(0, +) }
  public func queuedSubscriptionIDs(for url: String) -> Set<String> {
    Set((pendingSubscriptions[url] ?? [:]).keys)
  }

  /// A mutual favourite, location permission or an open location channel lets the default
  /// relays be targets; losing all three drops them (NostrRelayManager.applyDefaultRelayPolicy).
  /// Called when one of the three changes; without `force` nothing happens unless the answer
  /// changed.
  public func applyDefaultRelayPolicy(force: Bool = false) {
    let allow =
      dependencies.hasMutualFavorites() || dependencies.hasLocationPermission()
      || dependencies.isInLocationChannel()
    guard force || allow != defaultRelaysAllowed else { return }
    defaultRelaysAllowed = allow
    guard allow else {
      dropRelays(Set(defaultRelays))
      return
    }
    var known = Set(relays.map(\.url))
    for url in defaultRelays where known.insert(url).inserted { relays.append(Relay(url: url)) }
    if dependencies.activationAllowed() { ensureConnections(to: defaultRelays) }
  }

  /// Forgets relays: their sockets, queued REQs, queued connects, their rows, and queued sends
  /// that had no other relay.
  private func dropRelays(_ urls: Set<String>) {
    guard !urls.isEmpty else { return }
    for url in urls.sorted() {
      if let connection = connections.removeValue(forKey: url) {
        connection.cancel()
        log.record(.relay, ["relay": .string(url), "phase": "dropped"])
      }
      subscribed[url] = nil
      pendingSubscriptions[url] = nil
    }
    var kept: [PendingSend] = []
    for var item in messageQueue {
      item.pendingRelays.subtract(urls)
      if item.pendingRelays.isEmpty {
        log.record(
          .message, ["phase": "dropped", "id": .string(item.event.id), "reason": "relays dropped"])
      } else {
        kept.append(item)
      }
    }
    messageQueue = kept
    pendingTorConnectionURLs.subtract(urls)
    relays.removeAll { urls.contains($0.url) }
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
  }

  /// Adds a relay by hand and connects to it (NostrRelaySettings.didChangeNotification).
  public func addRelay(_ raw: String) -> Result<String, NostrRelaySettings.AddFailure> {
    let result = settings.add(raw, builtIn: Set(builtInRelays))
    switch result {
    case .success(let url):
      log.record(.relay, ["relay": .string(url), "phase": "added"])
      reloadDefaultRelays()
      // bitchat reconciles the whole default set (NostrRelaySettings.didChangeNotification).
      applyDefaultRelayPolicy(force: true)
    case .failure(let failure):
      log.record(
        .relay, ["relay": .string(raw), "phase": "rejected", "error": .string("\(failure)")])
    }
    return result
  }

  public func activationInputsChanged() { applyDefaultRelayPolicy() }

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
    let waitingForOK = confirmedSends.values.map(\.completion)
    confirmedSends.removeAll()
    for completion in waitingForOK { completion(false) }
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
    let known = Set(relays.map(\.url))
    relays += targets.filter { !known.contains($0) }.map { Relay(url: $0) }
    connectToRelays(targets)
  }

  /// Normalised and de-duplicated; the default relays only while the policy allows them.
  private func allowedRelayList(from urls: [String]) -> [String] {
    var seen = Set<String>()
    let barred = defaultRelaysAllowed ? [] : Set(defaultRelays)
    return urls.compactMap { NostrRelayURL.normalized($0) }.filter {
      !barred.contains($0) && seen.insert($0).inserted
    }
  }

  private func connectToRelays(_ relayUrls: [String]) {
    guard dependencies.activationAllowed() else { return }
    sweepExpiredSubscriptions()
    let unconnected = unconnectedRelays(relayUrls)
    if unconnected.isEmpty { return }
    guard !shouldWaitForTorBeforeConnecting else {
      return queueConnectionsUntilTorReady(unconnected)
    }
    unconnected.forEach(connectToRelay)
  }

  /// The allowed relays among `urls` with no connection yet and not given up on.
  private func unconnectedRelays(_ urls: [String]) -> [String] {
    allowedRelayList(from: urls).filter { connections[$0] == nil && !isPermanentlyFailed($0) }
  }

  private func queueConnectionsUntilTorReady(_ relayUrls: [String]) {
    let targets = unconnectedRelays(relayUrls)
    if targets.isEmpty { return }
    for url in targets where !pendingTorConnectionURLs.contains(url) {
      log.record(.relay, ["relay": .string(url), "phase": "queued"])
    }
    pendingTorConnectionURLs.formUnion(targets)
    // One wait for Tor at a time; later targets join the pending set it will connect.
    if awaitingTorForConnections { return }
    let generation = connectionGeneration
    awaitingTorForConnections = true
    dependencies.awaitTorReady { ready in
      guard generation == self.connectionGeneration else { return }
      let pending = Array(self.pendingTorConnectionURLs).sorted()
      self.awaitingTorForConnections = false
      self.pendingTorConnectionURLs = []
      guard ready else {
        self.torReadyWaitAttempts += 1
        if self.torReadyWaitAttempts < RelayBackoff.torReadyMaxWaitAttempts {
          self.queueConnectionsUntilTorReady(pending)
          return
        }
        // Still fail-closed, but callers waiting on EOSE are released; sends stay queued.
        self.torReadyWaitAttempts = 0
        self.unblockPendingEOSECallbacks(reason: "tor-unavailable")
        return
      }
      self.torReadyWaitAttempts = 0
      self.connectToRelays(pending)
    }
  }

  private func connectToRelay(_ url: String) {
    guard dependencies.activationAllowed() else { return }
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

  /// Sends only on relays connected now, never queues; completes true on the first relay's
  /// NIP-01 OK accepting it, false when every relay it went to rejected it, failed the write or
  /// dropped, when 10 s pass without an OK, on disconnect(), or at once while Tor is not ready.
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
    // A second send of the same event supersedes the first, which fails.
    confirmedSends.removeValue(forKey: event.id)?.completion(false)
    confirmedSendCounter += 1
    let token = confirmedSendCounter
    confirmedSends[event.id] = ConfirmedSend(
      token: token, relays: Set(connected.map(\.0)), completion: completion)
    scheduler.schedule(after: Self.confirmedSendTimeout) {
      guard self.confirmedSends[event.id]?.token == token else { return }
      self.confirmedSends.removeValue(forKey: event.id)?.completion(false)
    }
    for (url, connection) in connected {
      send(event, on: connection, relay: url) { written in
        // No OK can follow a write that failed: that relay counts as a rejection.
        if !written {
          self.settleConfirmedSend(event.id, relay: url, accepted: false, token: token)
        }
      }
    }
  }

  /// One relay's answer to a confirmed send: the first acceptance completes it true; it
  /// completes false once no relay is left to answer.
  private func settleConfirmedSend(
    _ id: String, relay url: String, accepted: Bool, token: Int? = nil
  ) {
    guard var pending = confirmedSends[id], token == nil || pending.token == token,
      pending.relays.remove(url) != nil
    else { return }
    if accepted || pending.relays.isEmpty {
      confirmedSends.removeValue(forKey: id)
      pending.completion(accepted)
    } else {
      confirmedSends[id] = pending
    }
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

  private func send(
    _ event: NostrEvent, on connection: RelayConnection, relay url: String,
    written: (@AppActor (Bool) -> Void)? = nil
  ) {
    connection.send(NostrRequest.event(event).text) { ok in
      self.log.record(
        .message, ["phase": ok ? "sent" : "failed", "id": .string(event.id), "relay": .string(url)])
      written?(ok)
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
    // Dropped while activation is off: nothing queued, and its EOSE callback never fires.
    guard dependencies.activationAllowed() else { return }
    let now = scheduler.now
    if let last = lastSubscribeAt[id], now - last < Self.subscribeCoalesceInterval { return }
    lastSubscribeAt[id] = now
    let message = NostrRequest.subscribe(id: id, filterJSON: filterJSON).text
    let urls = allowedRelayList(from: relayUrls ?? defaultRelays).filter {
      !isPermanentlyFailed($0)
    }
    // The same request, still queued or live on every relay: nothing to do.
    if let known = subscriptionRequests[id], known.message == message, known.relays == Set(urls),
      urls.allSatisfy({
        pendingSubscriptions[$0]?[id]?.message == message || subscribed[$0]?.contains(id) == true
      })
    {
      return
    }
    subscriptionRequests[id] = (message, Set(urls))
    var existing = Set(relays.map(\.url))
    for url in urls where !existing.contains(url) {
      relays.append(Relay(url: url))
      existing.insert(url)
    }
    for url in urls { queueSubscription(id: id, message: message, for: url) }
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

  /// Queues a REQ for a relay; past 64 queued for that relay the oldest goes (its request is
  /// still replayed when the relay connects, from subscriptionRequests).
  private func queueSubscription(id: String, message: String, for url: String) {
    queuedSubscriptionCounter &+= 1
    var queue = pendingSubscriptions[url] ?? [:]
    queue[id] = QueuedSubscription(
      message: message, queuedAt: scheduler.now, order: queuedSubscriptionCounter)
    while queue.count > Self.queuedSubscriptionsPerRelay,
      let oldest = queue.min(by: { $0.value.order < $1.value.order })
    {
      queue[oldest.key] = nil
    }
    pendingSubscriptions[url] = queue
  }

  /// Queued REQs older than 600 s go; run on every connect attempt.
  private func sweepExpiredSubscriptions() {
    let now = scheduler.now
    for (url, queue) in pendingSubscriptions {
      let fresh = queue.filter { now - $0.value.queuedAt <= Self.queuedSubscriptionLifetime }
      if fresh.count != queue.count { pendingSubscriptions[url] = fresh.isEmpty ? nil : fresh }
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
    eoseTrackers[id] = EOSETracker(notYetSent: relays, callback: callback, epoch: epoch)
    scheduler.schedule(after: RelayBackoff.eoseFallback) {
      // Fires only for this very wait: a newer one under the same id keeps its own timer.
      if self.eoseTrackers[id]?.epoch == epoch {
        self.eoseTrackers.removeValue(forKey: id)?.callback()
      }
    }
  }

  /// A parked callback becomes a tracker when its first relay connects (at once when it had
  /// no relay).
  private func promoteParkedEOSE(id: String) {
    guard eoseTrackers[id] == nil, let request = subscriptionRequests[id],
      let callback = pendingEOSECallbacks.removeValue(forKey: id)
    else { return }
    if request.relays.isEmpty { return callback() }
    startEOSETracking(id: id, relays: request.relays, callback: callback)
  }

  /// The REQ reached `url`: its tracker now waits for that relay's EOSE.
  private func noteREQSent(id: String, to url: String) {
    guard var tracker = eoseTrackers[id], tracker.notYetSent.remove(url) != nil else { return }
    tracker.waitingForEOSE.insert(url)
    tracker.reachedAny = true
    eoseTrackers[id] = tracker
  }

  /// `url` is out (EOSE, or it dropped): trackers that are now done call back.
  private func settleEOSE(relay url: String, answered: Bool, only id: String? = nil) {
    for key in eoseTrackers.keys.sorted() where id == nil || key == id {
      guard var tracker = eoseTrackers[key] else { continue }
      let involved = tracker.notYetSent.contains(url) || tracker.waitingForEOSE.contains(url)
      guard involved || answered else { continue }
      tracker.notYetSent.remove(url)
      tracker.waitingForEOSE.remove(url)
      if answered { tracker.reachedAny = true }
      if tracker.isDone {
        eoseTrackers[key] = nil
        tracker.callback()
      } else {
        eoseTrackers[key] = tracker
      }
    }
  }

  private func flushPendingSubscriptions(for url: String) {
    guard let connection = connections[url] else { return }
    var toSend = (pendingSubscriptions[url] ?? [:]).mapValues(\.message)
    for (id, request) in subscriptionRequests where request.relays.contains(url) {
      if toSend[id] == nil { toSend[id] = request.message }
    }
    for id in toSend.keys.sorted() {
      if subscribed[url]?.contains(id) == true {
        noteREQSent(id: id, to: url)
        continue
      }
      promoteParkedEOSE(id: id)
      noteREQSent(id: id, to: url)
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
      if eoseTrackers[sub] != nil { settleEOSE(relay: url, answered: true, only: sub) }
    case .ok(let id, let accepted, _):
      settleConfirmedSend(id, relay: url, accepted: accepted)
      log.record(
        .message,
        ["phase": accepted ? "accepted" : "rejected", "id": .string(id), "relay": .string(url)])
    case .notice:
      return  // a relay's human-readable notice changes nothing here
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
    for id in confirmedSends.keys.sorted() where confirmedSends[id]?.relays.contains(url) == true {
      settleConfirmedSend(id, relay: url, accepted: false)
    }
    updateRelayStatus(url, isConnected: false, error: error)
    settleEOSE(relay: url, answered: false)
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
