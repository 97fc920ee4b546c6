import FailClosedSupport
import Foundation
import MockTor
import OnionBrowserModel
import TLS
import TorControl

/// Runs the modelled app through timed actions and reports every event: the library side of
/// `failclosed app` (docs/app-driver.md).
public enum AppDriver {
  public enum Profile: String, Sendable, CaseIterable {
    case bitchat
    case hardened
    /// bitchat's rules with Foundation's URLSession as the Tor session (leaks on Linux).
    case naivePort = "naive-port"
    /// Onion Browser, one major version each: tor through its control port, the version's URL
    /// schemes, loads only through Tor (``OnionBrowserRuntime``; needs a control-port backend).
    case onionBrowser1 = "onion-browser-1"
    case onionBrowser2 = "onion-browser-2"
    case onionBrowser3 = "onion-browser-3"
    /// The current release, 3.X (README): an alias of `onion-browser-3`.
    case onionBrowser = "onion-browser"

    public var rules: SUTProfile { self == .hardened ? .hardened : .bitchat }

    /// The Onion Browser version this profile models; nil for bitchat's profiles.
    public var onionBrowserVersion: OnionBrowserVersion? {
      switch self {
      case .onionBrowser1: return .v1
      case .onionBrowser2: return .v2
      case .onionBrowser3, .onionBrowser: return .v3
      default: return nil
      }
    }
  }

  public enum Backend: String, Sendable, CaseIterable {
    /// No network: Arti's behaviour on the app's clock (bootstrap after N seconds).
    case simulated
    /// Arti reached at --socks: SOCKS binds only once bootstrapped (the mock's arti
    /// personality, run by the harness).
    case arti
    /// Arti in process: the harness's MockTor (arti personality) started and stopped by
    /// TorManager, listening at --socks, bootstrapping in --bootstrap-seconds, streams sent to
    /// the --mock-map destinations.
    case mock
    /// An external C tor (or the mock's ctor personality) through its control port at
    /// --control; SOCKS at --socks.
    case ctor
    /// Debian's tor, started by the app itself from --torrc-base (in the app's namespace: the
    /// device), driven through its control port as Onion Browser does; bridges from the
    /// store's `tor.bridges` when the profile uses them (``DebianTorBackend``).
    case tor
  }

  public struct Options: Sendable {
    public var profile: Profile = .bitchat
    public var backend: Backend = .arti
    public var timeScale: Double = 1
    /// The run's epoch (`--epoch`): the app's time 0, shared with the mock and the runner. Nil:
    /// time 0 is when the app has set up (a run of its own).
    public var epoch: MonotonicInstant?
    /// `--epoch stdin`: the epoch is handed over on standard input once the app has set up
    /// (``EpochReceiver``); `epoch` is then nil until `run` has it.
    public var receivesEpoch = false
    /// `--clock-page`: the run's event clock (``EventClock``) instead of a plain scaled
    /// one; the path of the page the runner made.
    public var clockPage: String?
    public var stateDirectory: String?
    public var socks = SocketAddress("127.0.0.1:39050")!
    public var directoryURL = GeoRelayDirectory.defaultRemoteURL
    public var relays: [String] = []
    /// PEM file of the CA the world's HTTPS hosts use; nil means Debian's store.
    public var trustPEMPath: String?
    /// Simulated backend only: seconds to bootstrap, nil for never.
    public var bootstrapSeconds: Double? = 5
    public var jitterSeed: UInt64 = 1
    /// In-process mock only: where streams for each hostname go (HOST=IP:PORT, loopback).
    public var mockDestinations: [String: SocketAddress] = [:]
    /// ctor backend only: the control port and how to authenticate.
    public var control: SocketAddress?
    public var controlAuthentication: ControlPortTorBackend.Authentication = .none
    /// tor backend only: the checked base torrc, binary, directory and ports.
    public var tor: DebianTorConfiguration?
    /// `--bridge` lines: replace the store's `tor.bridges` before the run (nil: leave it).
    public var bridges: [String]?
    public init() {}
  }

  /// Runs `actions` in order and returns when the last one is done. With `receivesEpoch` the
  /// epoch is handed over once the slow set-up (the store, the trust store) is done.
  public static func run(
    actions: [AppAction], options: Options, sink: @escaping @Sendable (AppEvent) -> Void
  ) async throws {
    let prepared = try prepare(options)
    var options = options
    if options.receivesEpoch {
      options.epoch = try await BlockingIO.run("app.epoch") { try EpochReceiver.receive() }
    }
    let clock: any HarnessClock
    if let path = options.clockPage {
      clock = try EventClock(
        factor: options.timeScale, epoch: options.epoch ?? .now, page: try ClockPage.open(at: path))
      if !Self.followsEventClock(options) { RunClockHold.beginForTheRun() }
    } else {
      clock = ScaledClock(factor: options.timeScale, epoch: options.epoch ?? .now)
    }
    try await run(actions: actions, options: options, clock: clock, prepared: prepared, sink: sink)
  }

  /// Whether every wait of this configuration is on the clock or held while it waits (the
  /// arti backend over the mock with bitchat's or the hardened rules: the scheduler, the port
  /// watcher, the SOCKS probe's connect, each fetch and each relay until its first pong). The
  /// others (the control-port backends' poll loop, Foundation's session in naive-port) wait
  /// in real time where the clock cannot see it: they hold the clock for the whole run, so it
  /// never jumps and runs as a plain scaled clock.
  static func followsEventClock(_ options: Options) -> Bool {
    options.backend == .arti && (options.profile == .bitchat || options.profile == .hardened)
  }

  /// The same on any clock (a ``ManualClock`` in tests). With an epoch the app's time 0 is the
  /// clock's 0 (the run's epoch: the app sets up before it and performs its first action at
  /// it); without one it is the clock's time once the app has set up.
  public static func run(
    actions: [AppAction], options: Options, clock: any HarnessClock,
    sink: @escaping @Sendable (AppEvent) -> Void
  ) async throws {
    try await run(
      actions: actions, options: options, clock: clock, prepared: try prepare(options), sink: sink)
  }

  /// What the app sets up before the run's clock matters: its store and its TLS trust.
  struct Prepared: Sendable {
    var store: KeyValueStore
    var tls: TLSClient
  }

  static func prepare(_ options: Options) throws -> Prepared {
    if options.profile.onionBrowserVersion != nil {
      try OnionBrowserRuntime.checkBackend(options)
    }
    let store: KeyValueStore
    if let directory = options.stateDirectory {
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
      store = try KeyValueStore(path: directory + "/preferences.json")
    } else {
      store = KeyValueStore()
    }
    if let bridges = options.bridges {
      do {
        try TorBridgeSettings.write(bridges, to: store)
      } catch {
        throw AppActionError("--bridge: \(error)")
      }
    }
    if options.backend == .tor && options.tor == nil {
      throw AppActionError("--backend tor needs --torrc-base FILE")
    }
    let trust: TLSTrust
    if let path = options.trustPEMPath {
      guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else {
        throw AppActionError("--ca \(path): cannot read the PEM file")
      }
      trust = .pem(pem)
    } else {
      trust = .system
    }
    return Prepared(store: store, tls: try TLSClient(trust: trust))
  }

  static func run(
    actions: [AppAction], options: Options, clock: any HarnessClock, prepared: Prepared,
    sink: @escaping @Sendable (AppEvent) -> Void
  ) async throws {
    let store = prepared.store
    let tls = prepared.tls
    // Without an epoch, virtual time 0 is now, after the slow setup (the trust store). With
    // one it is the run's time 0: the app builds its objects before it (what they log then has
    // a negative time), and `drive` waits for it before the first action, so a start-up slowed
    // by load (25 times longer in virtual time) does not delay the app's start.
    let origin = options.epoch == nil ? clock.now : 0
    let log = AppEventLog(clock: clock, origin: origin, sink: sink)
    if let version = options.profile.onionBrowserVersion {
      let (browser, tor) = await OnionBrowserRuntime.make(
        version: version,
        options: options, clock: clock, log: log, store: store, tls: tls)
      reportStarted(options)
      try await drive(actions, clock: clock, origin: origin, tor: tor) {
        await browser.perform($0)
      } finish: {
        await browser.shutdown()
      }
    } else {
      let (runtime, tor) = await makeRuntime(
        options: options, clock: clock, log: log, store: store, tls: tls)
      reportStarted(options)
      try await drive(actions, clock: clock, origin: origin, tor: tor) {
        await perform($0, on: runtime)
      } finish: {
        guard let tor else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
          Task { @AppActor in tor.stop { continuation.resume() } }
        }
      }
    }
    log.record(.action, ["action": "end"])
  }

  /// With a handed-over epoch: tells the runner how far past it the app's objects were built
  /// (past 0: the runner's lead was too short and the first action is late).
  static func reportStarted(_ options: Options) {
    if options.receivesEpoch, let epoch = options.epoch {
      EpochReceiver.reportStarted(epoch: epoch)
    }
  }

  /// Performs each action at its time on the app's clock, then `finish`. The app's own tor (if
  /// it started one) dies with the app: on a signal, on an error, and at the end.
  static func drive(
    _ actions: [AppAction], clock: any HarnessClock, origin: Double, tor: DebianTorBackend?,
    perform: (AppAction.Kind) async -> Void, finish: () async -> Void
  ) async throws {
    let signals = tor.map { tor in TerminationSignals.install { tor.terminateForExit() } }
    defer { signals?.cancel() }
    // On the event clock the next timed action is pinned before the current one is
    // performed (after it, when it waits on the clock itself): the time stands at it until it
    // has been performed, however long the actions before it take to be scheduled.
    let eventClock = clock as? EventClock
    func pin(_ index: Int) -> EventClock.Pin? {
      guard index < actions.count, let at = actions[index].at else { return nil }
      return eventClock?.pin(at: origin + at)
    }
    var current = pin(0)
    defer { current.map { eventClock?.unpin($0) } }
    do {
      for (index, action) in actions.enumerated() {
        if let eventClock, let pinned = current {
          try await eventClock.sleep(untilNanoseconds: pinned.nanoseconds)
        } else if let at = action.at {
          let wait = at - (clock.now - origin)
          if wait > 0 { try await clock.sleep(seconds: wait) }
        }
        let waits: Bool
        if case .wait = action.kind { waits = true } else { waits = false }
        let next = waits ? nil : pin(index + 1)
        await perform(action.kind)
        current.map { eventClock?.unpin($0) }
        current = waits ? pin(index + 1) : next
      }
    } catch {
      if let tor { try? await BlockingIO.run("app.tor-exit") { tor.terminateForExit() } }
      throw error
    }
    await finish()
  }

  @AppActor static func makeRuntime(
    options: Options, clock: any HarnessClock, log: AppEventLog, store: KeyValueStore,
    tls: TLSClient
  ) -> (AppRuntime, DebianTorBackend?) {
    let scheduler: any AppScheduler =
      (clock as? ManualClock) ?? ClockScheduler.reportingLateness(clock: clock, log: log)
    let backend: any TorBackend
    let probe: any SocksProbe
    var debianTor: DebianTorBackend?
    switch options.backend {
    case .simulated:
      let arti = SimulatedArti(scheduler: scheduler, bootstrapSeconds: options.bootstrapSeconds)
      backend = arti
      probe = arti
    case .arti:
      backend = ExternalArtiBackend(socks: options.socks, scheduler: scheduler, clock: clock)
      probe = SocketSocksProbe(log: log, timeScale: options.timeScale)
    case .mock:
      let socks = options.socks
      let destinations = DestinationMap(options.mockDestinations)
      // A stall is a bootstrap that takes far longer than any run.
      let seconds = options.bootstrapSeconds ?? 1e9
      backend = InProcessArtiBackend(scheduler: scheduler) {
        MockTorConfiguration(
          personality: .arti, socksAddress: socks, clock: clock,
          bootstrapPlan: .healthy(after: seconds), destinations: destinations)
      }
      probe = SocketSocksProbe(log: log, timeScale: options.timeScale)
    case .ctor:
      backend = ControlPortTorBackend(
        control: options.control ?? SocketAddress("127.0.0.1:9051")!,
        authentication: options.controlAuthentication, scheduler: scheduler, log: log,
        stopDisablesNetwork: true, clock: controllerClock(clock))
      probe = SocketSocksProbe(log: log, timeScale: options.timeScale)
    case .tor:
      // run() has checked that the configuration is there.
      let tor = DebianTorBackend(
        configuration: options.tor!, profile: options.profile.rules, store: store,
        scheduler: scheduler, log: log)
      debianTor = tor
      backend = tor
      probe = SocketSocksProbe(log: log, timeScale: options.timeScale)
    }
    let scale = options.timeScale
    let socks = options.socks
    let makeTor: @AppActor () -> NetworkSession
    if options.profile == .naivePort {
      makeTor = {
        NaiveURLSession(
          socksHost: socks.host, socksPort: Int(socks.port), log: log, timeScale: scale)
      }
    } else {
      makeTor = {
        StreamSession(
          connector: TorStreamConnector(socksEndpoint: socks, log: log), tls: tls, log: log,
          timeScale: scale)
      }
    }
    var configuration = AppRuntime.Configuration(
      profile: options.profile.rules, backend: backend, probe: probe, makeTorSession: makeTor,
      makeDirectSession: {
        StreamSession(
          connector: DirectStreamConnector(log: log), tls: tls, log: log, timeScale: scale)
      }, store: store, stateDirectory: options.stateDirectory,
      directoryURL: options.directoryURL, jitterSeed: options.jitterSeed)
    if !options.relays.isEmpty { configuration.builtInRelays = options.relays }
    configuration.socksPort = options.socks.port
    log.record(
      .state,
      [
        "component": "app", "field": "profile", "value": .string(options.profile.rawValue),
        "backend": .string(options.backend.rawValue), "torEnforced": .bool(TorManager.torEnforced),
      ])
    return (AppRuntime(configuration: configuration, scheduler: scheduler, log: log), debianTor)
  }

  /// The control-port backend's clock for its 0.15 s polls, 5 s heartbeats and 15 s guard:
  /// the app's own (the run's: the mock's ctor personality runs on it; a real tor runs at
  /// --time-scale 1, in real time). A manual clock's tests drive a real control port, whose
  /// connection waits in real time.
  static func controllerClock(_ clock: any HarnessClock) -> any HarnessClock {
    clock is ManualClock ? SystemClock() : clock
  }

  @AppActor static func perform(_ kind: AppAction.Kind, on runtime: AppRuntime) async {
    var fields: [String: EventValue] = ["action": .string(kind.name)]
    if let argument = kind.eventArgument { fields["argument"] = .string(argument) }
    runtime.log.record(.action, fields)
    switch kind {
    case .start: runtime.launch()
    case .foreground: runtime.enterForeground()
    case .background: runtime.enterBackground()
    case .setPreference(let on): runtime.activation.setUserTorEnabled(on)
    case .revokeActivation: runtime.activation.setLocationPermission(authorized: false)
    case .grantActivation: runtime.activation.setLocationPermission(authorized: true)
    case .pathChange(let satisfied): runtime.pathChanged(satisfied: satisfied)
    case .addRelay(let url): _ = runtime.relays.addRelay(url)
    case .sendMessage(let text): runtime.sendMessage(text)
    case .refreshDirectory: runtime.refreshDirectory()
    case .openURL:
      runtime.log.record(.error, ["message": "open-url needs an onion-browser profile"])
    case .wait(let seconds):
      try? await runtime.scheduler.sleepOnClock(seconds)
    // The harness's own step (never in an actions file), or a registered verb with no model
    // here: the action line above is its whole effect.
    case .torCrash, .other: break
    }
  }
}

extension AppScheduler {
  /// Sleeps `seconds` of the app's clock.
  @AppActor func sleepOnClock(_ seconds: Double) async throws {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      schedule(after: seconds) { continuation.resume() }
    }
  }
}
