import Foundation

/// The modelled app: TorManager, NetworkActivationService, TorURLSession, NostrRelayManager and
/// GeoRelayDirectory wired as bitchat wires them, with bitchat's background and foreground
/// handling. The app driver and the tests drive it through these methods.
@AppActor public final class AppRuntime {
  public struct Configuration {
    public var profile: SUTProfile
    public var backend: any TorBackend
    public var probe: any SocksProbe
    public var makeTorSession: @AppActor () -> NetworkSession
    public var makeDirectSession: @AppActor () -> NetworkSession
    public var store: KeyValueStore
    public var stateDirectory: String?
    public var directoryURL: String
    public var jitterSeed: UInt64
    public var locationPermissionAuthorized: Bool
    public var builtInRelays: [String] = NostrRelaySettings.builtInRelays
    /// bitchat's constant 39050; tests move it to a free port.
    public var socksPort: UInt16 = 39050

    public init(
      profile: SUTProfile, backend: any TorBackend, probe: any SocksProbe,
      makeTorSession: @escaping @AppActor () -> NetworkSession,
      makeDirectSession: @escaping @AppActor () -> NetworkSession, store: KeyValueStore,
      stateDirectory: String? = nil, directoryURL: String = GeoRelayDirectory.defaultRemoteURL,
      jitterSeed: UInt64 = 1, locationPermissionAuthorized: Bool = true
    ) {
      self.profile = profile
      self.backend = backend
      self.probe = probe
      self.makeTorSession = makeTorSession
      self.makeDirectSession = makeDirectSession
      self.store = store
      self.stateDirectory = stateDirectory
      self.directoryURL = directoryURL
      self.jitterSeed = jitterSeed
      self.locationPermissionAuthorized = locationPermissionAuthorized
    }
  }

  public let scheduler: any AppScheduler
  public let log: AppEventLog
  public let bus: NotificationBus
  public let tor: TorManager
  public let activation: NetworkActivationService
  public let urlSession: TorURLSession
  public let settings: NostrRelaySettings
  public private(set) var relays: NostrRelayManager!
  public private(set) var directory: GeoRelayDirectory!
  private let backend: any TorBackend
  private var random: SeededRandom
  private var messageCounter = 0
  /// AppRuntime.swift (iOS), handleScenePhaseChange: the launch's own first `.active` is
  /// handled apart, and the Tor restart and the sessions' rebuild happen only on a return
  /// from background.
  private var didHandleInitialActive = false
  private var didEnterBackground = false

  public init(configuration: Configuration, scheduler: any AppScheduler, log: AppEventLog) {
    self.scheduler = scheduler
    self.log = log
    let profile = configuration.profile
    bus = NotificationBus(log: log)
    backend = configuration.backend
    random = SeededRandom(seed: configuration.jitterSeed)
    let stateDirectory = configuration.stateDirectory
    tor = TorManager(
      backend: configuration.backend, probe: configuration.probe, scheduler: scheduler, bus: bus,
      log: log, profile: profile,
      dataDirectory: (stateDirectory ?? NSTemporaryDirectory() + "failclosed-app") + "/arti",
      socksPort: configuration.socksPort)
    activation = NetworkActivationService(
      store: configuration.store, tor: tor, scheduler: scheduler, bus: bus, log: log,
      locationPermissionAuthorized: configuration.locationPermissionAuthorized)
    urlSession = TorURLSession(
      profile: profile, log: log, makeTorSession: configuration.makeTorSession,
      makeDirectSession: configuration.makeDirectSession)
    settings = NostrRelaySettings(
      store: configuration.store, profile: profile,
      torSupportsOnionServices: configuration.backend.supportsOnionServices)
    let store = configuration.store
    let tor = self.tor
    let activation = self.activation
    let urlSession = self.urlSession
    relays = NostrRelayManager(
      dependencies: .init(
        activationAllowed: { activation.activationAllowed },
        userTorEnabled: { activation.userTorEnabled }, torEnforced: TorManager.torEnforced,
        torIsReady: { tor.isReady }, torIsForeground: { tor.isForeground() },
        awaitTorReady: { completion in tor.awaitReady(completion: completion) },
        makeSession: { urlSession.session },
        // Weak: a relay's reconnect timer can fire on the clock's queue after the runtime is
        // gone (seen as a crash reading an unowned reference in a parallel test run).
        jitterUnit: { [weak self] in self?.random.nextUnit() ?? 0.5 },
        hasMutualFavorites: { activation.hasMutualFavorites },
        hasLocationPermission: { activation.locationPermissionAuthorized },
        isInLocationChannel: { activation.inLocationChannel }),
      settings: settings, scheduler: scheduler, log: log,
      builtInRelays: configuration.builtInRelays)
    directory = GeoRelayDirectory(
      dependencies: .init(
        store: store, remoteURL: configuration.directoryURL,
        awaitTorReady: { completion in
          guard NetworkActivationService.persistedTorPreference(in: store) else {
            return completion(true)
          }
          tor.awaitReady(completion: completion)
        },
        currentSession: { urlSession.session },
        activationAllowed: { activation.activationAllowed },
        torPreference: { NetworkActivationService.persistedTorPreference(in: store) },
        cachePath: stateDirectory.map { $0 + "/" + GeoRelayDirectory.cacheFileName },
        bundledPaths: [], currentDirectory: FileManager.default.currentDirectoryPath),
      scheduler: scheduler, log: log, profile: profile)
    activation.attach(proxy: urlSession, relays: relays)
  }

  /// App launch. bitchat's AppRuntime.init touches GeoRelayDirectory.shared (ChatViewModel's
  /// networkActivationAllowed is true unless a panic wipe is pending), whose init starts the
  /// first fetch with the session of that moment (TorURLSession starts in Tor mode), and only
  /// AppRuntime.start() calls NetworkActivationService.start(): with the preference off that
  /// fetch tries Tor, which never starts, and retries 60 s later (issue 14, item 3). The
  /// hardened profile's directory needs activation's answer, so activation starts first. The
  /// app launches into the foreground: its first `.active` scene phase is handled here.
  public func launch() {
    if directory.profileNeedsActivationFirst {
      activation.start()
      directory.start(bus: bus)
    } else {
      directory.start(bus: bus)
      activation.start()
    }
    if activation.activationAllowed { didHandleInitialActive = true }
  }

  /// bitchat's `.background` scene phase: not-ready without stopping Arti, relays
  /// disconnected, and the app remembers it went to the background.
  public func enterBackground() {
    tor.setAppForeground(false)
    tor.goDormantOnBackground()
    relays.disconnect()
    didEnterBackground = true
  }

  /// bitchat's `.active` scene phase (AppRuntime.swift, iOS): nothing at all unless network
  /// activation is allowed; the launch's first one only marks itself handled; a return from
  /// background restarts Tor if auto-start is allowed and it is not ready, then (detached, only
  /// with auto-start allowed) awaits readiness up to 60 s, rebuilds the sessions and resets
  /// the relay connections.
  public func enterForeground() {
    // iOS posts didBecomeActive whatever activation says: GeoRelayDirectory's observer
    // prefetches (a hop later).
    directory.appDidBecomeActive()
    guard activation.activationAllowed else { return }
    tor.setAppForeground(true)
    let returningFromBackground = didHandleInitialActive && didEnterBackground
    if returningFromBackground {
      if tor.isAutoStartAllowed() && !tor.isReady {
        tor.ensureRunningOnForeground()
      }
    } else {
      didHandleInitialActive = true
    }
    didEnterBackground = false
    guard returningFromBackground && tor.isAutoStartAllowed() else { return }
    scheduler.schedule(after: 0) {
      self.tor.awaitReady(timeout: 60) { _ in
        self.urlSession.rebuild()
        self.relays.resetAllConnections()
      }
    }
  }

  /// An NWPathMonitor update: activation's reachability, TorManager's path poke, and the
  /// backend's network-change handling (RELOAD+NEWNYM for a control-port tor).
  public func pathChanged(satisfied: Bool) {
    activation.pathUpdated(satisfied: satisfied)
    tor.pathDidChange()
    backend.networkChanged()
  }

  public func sendMessage(_ text: String) {
    messageCounter += 1
    relays.sendEvent(NostrEvent(id: String(format: "m%04d", messageCounter), content: text))
  }

  public func refreshDirectory() {
    directory.prefetchIfNeeded(force: true)
  }
}
