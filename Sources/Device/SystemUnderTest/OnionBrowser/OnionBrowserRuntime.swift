import FailClosedSupport
import Foundation
import OnionBrowserModel
import TLS
import TorControl

/// The modelled Onion Browser, one major version (profiles `onion-browser-1`, `-2`, `-3`): no
/// Nostr, no directory; it starts tor through ``ControlPortTorBackend`` (that version's
/// control-port driving) and takes URLs the way that version does (``OnionBrowserURLScheme``).
/// Every load goes through Tor's SOCKS port: this runtime has no direct route at all. What
/// differs between versions, and matters for failing closed:
/// - what loads before tor is ready: 1.X holds the URL and at 100 % only asks the user (the
///   user is not modelled: nothing loads); 2.X opens a pending URL as soon as the app is active
///   while tor starts (AppDelegate.swift l.284-292) or when the guard gives up, so the load goes
///   to tor's SOCKS port before the bootstrap is done; 3.X opens a tab, but its navigation is
///   cancelled while tor is not ready (Tab+WKNavigationDelegate.swift l.27-35, OrbotManager
///   l.164-178) and is not retried;
/// - the background: 1.X closes its control connection and exits before the first 100 %;
///   2.X shuts tor down (SIGNAL SHUTDOWN) and starts a new one when active again; 3.X leaves tor
///   running;
/// - the stall guard: 2.X only.
@AppActor public final class OnionBrowserRuntime {
  public typealias Backend = TorBackend & OnionBrowserTorControl

  /// App seconds between looks at the controller's state (the UI's reaction to its
  /// callbacks).
  public static let readinessInterval = 0.15
  /// The load's timeout in app seconds (a WebView's default is 60).
  public static let loadTimeout = 60.0

  public let version: OnionBrowserVersion
  public let log: AppEventLog
  private let backend: any Backend
  private let scheduler: any AppScheduler
  private let socks: SocketAddress
  private let makeTorSession: @AppActor (SocketAddress) -> NetworkSession
  private var queue = OnionBrowserLaunchQueue()
  /// 2.X: Settings.openNewUrlOnStart.
  private var pending: String?
  private var session: NetworkSession?
  private var watch: ScheduledTimer?
  private var started = false
  private var ready = false
  private var stalledSeen = false
  private var exited = false
  /// 2.X: OnionManager's state is `stopped` (after the background).
  private var torStopped = false

  public init(
    version: OnionBrowserVersion, backend: any Backend, scheduler: any AppScheduler,
    log: AppEventLog, socks: SocketAddress,
    makeTorSession: @escaping @AppActor (SocketAddress) -> NetworkSession
  ) {
    self.version = version
    self.backend = backend
    self.scheduler = scheduler
    self.log = log
    self.socks = socks
    self.makeTorSession = makeTorSession
  }

  public var torConnected: Bool { ready }

  /// App launch: start tor and watch the controller.
  public func launch() {
    guard !started, !exited else { return }
    started = true
    startTor()
  }

  private func startTor() {
    ready = false
    stalledSeen = false
    torStopped = false
    let result = backend.start(dataDirectory: "", socksPort: socks.port)
    log.state("tor", "start", .int(Int(result)))
    if version == .v2 { log.state("tor", "state", "started") }
    watchController()
  }

  /// An incoming URL (application(_:open:) / scene(_:openURLContexts:)).
  public func openURL(_ url: String) {
    guard !exited else { return }
    switch version {
    case .v1:
      switch queue.open(url) {
      case .ignored: ignored(url)
      case .held(let web): record(web, "held", source: url)
      case .confirm(let web): record(web, "confirm", source: url)
      }
    case .v2:
      guard case .web(let web) = OnionBrowserURLScheme.decide(url, version: .v2) else {
        return ignored(url)
      }
      pending = web
      record(web, "pending", source: url)
      // The app is brought forward with the URL: applicationDidBecomeActive follows.
      becameActive2()
    case .v3:
      switch OnionBrowserURLScheme.decide(url, version: .v3) {
      case .ignored: ignored(url)
      case .callback: record(url, "callback", source: url)
      case .web(let web):
        if ready {
          load(web, source: url)
        } else {
          // decidePolicyFor: allowRequests() is false until TorManager's status is started.
          record(web, "cancelled", source: url)
        }
      }
    }
  }

  /// A path update: the network changed (1.X acts only when it is reachable).
  public func pathChanged(satisfied: Bool) {
    guard !exited else { return }
    backend.networkChanged(reachable: satisfied)
  }

  public func didEnterBackground() {
    guard !exited else { return }
    backend.appDidEnterBackground()
    if version == .v2 {
      // OnionManager.stopTor: SIGNAL SHUTDOWN, state stopped.
      torStopped = true
      log.state("tor", "state", "stopped")
      if ready {
        ready = false
        log.state("tor", "isReady", false)
      }
    }
  }

  public func didBecomeActive() {
    guard !exited else { return }
    switch version {
    case .v1: backend.appDidBecomeActive()
    case .v2: becameActive2()
    case .v3: break
    }
  }

  /// 2.X applicationDidBecomeActive (AppDelegate.swift l.284-292): tor stopped -> startTor
  /// (a new tor); started or connected -> torConnFinished, which opens the pending URL.
  private func becameActive2() {
    guard started else { return }
    if torStopped {
      watch?.cancel()
      backend.stop { [weak self] in self?.startTor() }
      torStopped = false
    } else {
      torConnFinished()
    }
  }

  /// 2.X torConnFinished (AppDelegate.swift l.454-468): the UI, and the pending URL opens.
  private func torConnFinished() {
    guard let url = pending else { return }
    pending = nil
    load(url, source: nil)
  }

  /// App exit: the controller ends the version's way (1.X nothing, 2.X/3.X SIGNAL SHUTDOWN).
  public func shutdown() async {
    watch?.cancel()
    session?.invalidateAndCancel()
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      backend.stop { continuation.resume() }
    }
  }

  public func perform(_ kind: AppAction.Kind) async {
    var fields: [String: EventValue] = ["action": .string(kind.name)]
    if let argument = kind.eventArgument { fields["argument"] = .string(argument) }
    log.record(.action, fields)
    switch kind {
    case .start: launch()
    case .openURL(let url): openURL(url)
    case .pathChange(let satisfied): pathChanged(satisfied: satisfied)
    case .background: didEnterBackground()
    case .foreground: didBecomeActive()
    case .wait(let seconds): try? await scheduler.sleepOnClock(seconds)
    default:
      log.record(
        .error,
        ["message": .string("action '\(kind.name)' is not modelled for \(version.profileName)")])
    }
  }

  // MARK: - The controller's state

  private func watchController() {
    watch?.cancel()
    watch = scheduler.schedule(after: Self.readinessInterval) { [weak self] in
      guard let self, !self.exited else { return }
      self.look()
      if !self.exited { self.watchController() }
    }
  }

  private func look() {
    let state = backend.browserState
    if let reason = state.gaveUp, version == .v1 {
      // exit(0): the app and the tor inside it are gone.
      exited = true
      log.state("app", "exited", .string(reason))
      session?.invalidateAndCancel()
      backend.stop {}
      return
    }
    if state.stalled && !stalledSeen && version == .v2 {
      // torConnDifficulties -> torConnFinished: the UI, and the pending URL opens.
      stalledSeen = true
      torConnFinished()
    }
    if state.ready && !ready && !torStopped {
      ready = true
      if version == .v2 { log.state("tor", "state", "connected") }
      log.state("tor", "isReady", true)
      torDidConnect()
    }
  }

  private func torDidConnect() {
    switch version {
    case .v1:
      // TorController.m l.329-341: ask about the start URL, or load the home page
      // (onionbrowser:home, the app's own page).
      if let url = queue.torDidConnect() {
        record(url, "confirm", source: nil)
      } else {
        log.record(.request, ["url": "onionbrowser:home", "phase": "home"])
      }
    case .v2: torConnFinished()
    case .v3: break
    }
  }

  private func load(_ url: String, source: String?) {
    let endpoint: SocketAddress
    if version == .v3 {
      // TorManager.swift l.184-196: the SOCKS listener tor reported.
      guard let reported = backend.browserState.socks, let address = SocketAddress(reported)
      else {
        return record(url, "cancelled", source: source)
      }
      endpoint = address
    } else {
      endpoint = socks
    }
    let session = self.session ?? makeTorSession(endpoint)
    self.session = session
    session.fetch(url, timeout: Self.loadTimeout) { _ in }
  }

  private func record(_ url: String, _ phase: String, source: String?) {
    var fields: [String: EventValue] = ["url": .string(url), "via": "tor", "phase": .string(phase)]
    if let source { fields["source"] = .string(source) }
    log.record(.request, fields)
  }

  private func ignored(_ url: String) {
    log.record(.request, ["url": .string(url), "phase": "ignored"])
  }
}
