import Foundation

/// bitchat's GeoRelayDirectory: relays with coordinates from a CSV, loaded cache -> bundle ->
/// ./relays/online_relays_gps.csv, refreshed from the remote every 24 h (checked hourly), with
/// retries from 60 s doubling to 3600 s (attempt count capped at 10), a forced fetch on
/// TorDidBecomeReady unless the last success is under 60 s old, a 15 s timeout, 2xx and the
/// same URL required. The Tor wait is keyed on the preference, not on readiness, and the
/// session is captured when the fetch starts. Not gated by activation in bitchat (weakness
/// 2); the hardened profile requires activation and, with the preference on, the Tor route.
@AppActor public final class GeoRelayDirectory {
  public nonisolated static let defaultRemoteURL =
    "https://raw.githubusercontent.com/permissionlesstech/bitchat/refs/heads/main/relays/online_relays_gps.csv"
  public nonisolated static let lastFetchKey = "georelay.lastFetchAt"
  public nonisolated static let cacheFileName = "georelays_cache_v2.csv"
  public nonisolated static let fetchInterval = 24.0 * 3600
  public nonisolated static let refreshCheckInterval = 3600.0
  public nonisolated static let retryInitial = 60.0
  public nonisolated static let retryMax = 3600.0
  public nonisolated static let retryAttemptCap = 10
  public nonisolated static let fetchTimeout = 15.0

  public struct Dependencies {
    public var store: KeyValueStore
    public var remoteURL: String
    /// bitchat: `guard persistedTorPreference() else { return true }; awaitReady()`.
    public var awaitTorReady: @AppActor (@escaping @AppActor (Bool) -> Void) -> Void
    /// TorURLSession.shared.session, read when a fetch starts.
    public var currentSession: @AppActor () -> NetworkSession
    /// Hardened gate: activation allowed and, with the preference on, the Tor route.
    public var activationAllowed: @AppActor () -> Bool
    public var torPreference: @AppActor () -> Bool
    public var cachePath: String?
    public var bundledPaths: [String]
    public var currentDirectory: String?

    public init(
      store: KeyValueStore, remoteURL: String = GeoRelayDirectory.defaultRemoteURL,
      awaitTorReady: @escaping @AppActor (@escaping @AppActor (Bool) -> Void) -> Void,
      currentSession: @escaping @AppActor () -> NetworkSession,
      activationAllowed: @escaping @AppActor () -> Bool,
      torPreference: @escaping @AppActor () -> Bool, cachePath: String?,
      bundledPaths: [String] = [], currentDirectory: String? = nil
    ) {
      self.store = store
      self.remoteURL = remoteURL
      self.awaitTorReady = awaitTorReady
      self.currentSession = currentSession
      self.activationAllowed = activationAllowed
      self.torPreference = torPreference
      self.cachePath = cachePath
      self.bundledPaths = bundledPaths
      self.currentDirectory = currentDirectory
    }
  }

  public private(set) var entries: [GeoRelayCSV.Entry] = []
  public private(set) var retryAttempt = 0
  public private(set) var isFetching = false
  private var retryTimer: ScheduledTimer?
  private var refreshTimer: ScheduledTimer?
  private let dependencies: Dependencies
  private let scheduler: any AppScheduler
  private let log: AppEventLog
  private let profile: SUTProfile
  private var bus: NotificationBus?

  public init(
    dependencies: Dependencies, scheduler: any AppScheduler, log: AppEventLog,
    profile: SUTProfile
  ) {
    self.dependencies = dependencies
    self.scheduler = scheduler
    self.log = log
    self.profile = profile
    entries = loadLocalEntries()
  }

  /// Observers, the hourly check, a first prefetch (bitchat's autoStart).
  public func start(bus: NotificationBus) {
    self.bus = bus
    bus.observe { notification in
      if notification == .torDidBecomeReady {
        // bitchat hops through Task { @MainActor }: one turn later.
        self.scheduler.schedule(after: 0) { self.prefetchIfNeeded(force: true) }
      }
    }
    scheduleRefreshCheck()
    prefetchIfNeeded()
  }

  /// The hardened profile gates the directory on activation, so the app starts activation
  /// before the directory; bitchat touches the directory first.
  public var profileNeedsActivationFirst: Bool { profile.directoryGatedByActivation }

  /// iOS's didBecomeActiveNotification (GeoRelayDirectory's registerObservers): a prefetch,
  /// not forced, one main-actor hop later. bitchat registers it on iOS and macOS only
  /// (activeNotificationName is nil elsewhere).
  public func appDidBecomeActive() {
    scheduler.schedule(after: 0) { self.prefetchIfNeeded() }
  }

  private func scheduleRefreshCheck() {
    refreshTimer = scheduler.schedule(after: Self.refreshCheckInterval) {
      self.prefetchIfNeeded()
      self.scheduleRefreshCheck()
    }
  }

  private var lastFetchAt: Double? {
    (dependencies.store.object(forKey: Self.lastFetchKey) as? NSNumber)?.doubleValue
  }

  public func prefetchIfNeeded(force: Bool = false) {
    guard !isFetching else { return }
    let now = scheduler.now
    if !force {
      if let last = lastFetchAt, now - last < Self.fetchInterval { return }
    } else if let last = lastFetchAt, now - last < Self.retryInitial {
      log.record(.directory, ["phase": "skipped", "reason": "refreshed under 60 s ago"])
      return
    }
    cancelRetry()
    fetchRemote()
  }

  private func fetchRemote() {
    guard !isFetching else { return }
    isFetching = true
    let url = dependencies.remoteURL
    // bitchat captures the session before the Tor wait.
    let captured = dependencies.currentSession()
    let baseline = Set(entries)
    log.record(.directory, ["phase": "fetch", "url": .string(url)])
    if profile.directoryGatedByActivation && !dependencies.activationAllowed() {
      handleFailure("activation not allowed")
      return
    }
    dependencies.awaitTorReady { ready in
      guard ready else {
        self.handleFailure("tor not ready")
        return
      }
      var session = captured
      if self.profile.directoryGatedByActivation {
        // Hardened: decide the route now, and never direct while the preference is on.
        session = self.dependencies.currentSession()
        guard self.dependencies.activationAllowed(),
          !self.dependencies.torPreference() || session.route == .tor
        else {
          self.handleFailure("route not tor")
          return
        }
      }
      session.fetch(url, timeout: Self.fetchTimeout) { result in
        switch result {
        case .success(let response):
          guard (200...299).contains(response.status), response.url == url else {
            self.handleFailure("bad server response \(response.status)")
            return
          }
          switch GeoRelayCSV.validatedEntries(
            from: Data(response.body), minimumEntries: GeoRelayCSV.Policy.live.minimumRemoteEntries,
            baseline: baseline)
          {
          case .success(let parsed): self.handleSuccess(parsed, csv: response.body)
          case .failure(let rejection):
            self.log.record(.directory, ["phase": "rejected", "reason": .string("\(rejection)")])
            self.handleFailure("invalid data")
          }
        case .failure(let failure):
          self.handleFailure("\(failure)")
        }
      }
    }
  }

  private func handleSuccess(_ parsed: [GeoRelayCSV.Entry], csv: [UInt8]) {
    entries = parsed
    if let path = dependencies.cachePath {
      try? Data(csv).write(to: URL(fileURLWithPath: path), options: .atomic)
    }
    dependencies.store.set(scheduler.now, forKey: Self.lastFetchKey)
    isFetching = false
    retryAttempt = 0
    cancelRetry()
    log.record(.directory, ["phase": "refreshed", "count": .int(parsed.count)])
    // Waiters (location notes with no relays) retry on it.
    bus?.post(.geoRelayDirectoryDidRefresh)
  }

  private func handleFailure(_ reason: String) {
    isFetching = false
    scheduleRetry(reason: reason)
  }

  private func scheduleRetry(reason: String) {
    retryAttempt = min(retryAttempt + 1, Self.retryAttemptCap)
    var delay = Self.retryInitial
    for _ in 0..<max(retryAttempt - 1, 0) { delay *= 2 }
    delay = min(Self.retryMax, max(Self.retryInitial, delay))
    cancelRetry()
    log.record(
      .directory,
      [
        "phase": "retry", "delay": .double(delay), "reason": .string(reason),
        "attempt": .int(retryAttempt),
      ])
    retryTimer = scheduler.schedule(after: delay) { self.prefetchIfNeeded(force: true) }
  }

  private func cancelRetry() {
    retryTimer?.cancel()
    retryTimer = nil
  }

  private func loadLocalEntries() -> [GeoRelayCSV.Entry] {
    var candidates: [(String, String)] = []
    if let cache = dependencies.cachePath { candidates.append(("cache", cache)) }
    candidates += dependencies.bundledPaths.map { ("bundle", $0) }
    if let cwd = dependencies.currentDirectory {
      candidates.append(("cwd", cwd + "/relays/online_relays_gps.csv"))
    }
    for (source, path) in candidates {
      guard let data = FileManager.default.contents(atPath: path),
        case .success(let parsed) = GeoRelayCSV.validatedEntries(from: data, minimumEntries: 1)
      else { continue }
      log.record(
        .directory, ["phase": "loaded", "source": .string(source), "count": .int(parsed.count)])
      return parsed
    }
    log.record(.directory, ["phase": "loaded", "source": "none", "count": 0])
    return []
  }
}
