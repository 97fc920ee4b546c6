import FailClosedSupport
import Foundation
import TLS

/// The modelled Onion Browser (profile `onion-browser`): no Nostr, no directory; it starts tor
/// through ``ControlPortTorBackend`` (Onion Browser's control-port driving), takes URLs through
/// its URL schemes (``OnionBrowserLaunchQueue``), holds one that arrives before Tor has
/// connected and loads it through Tor's SOCKS port once the bootstrap reaches 100; a URL that
/// arrives afterwards asks the user to confirm (an event; the user is not modelled). Every load
/// goes through a Tor session: this runtime has no direct route at all.
@AppActor public final class OnionBrowserRuntime {
  /// App seconds between looks at the backend's progress (1.X's poll cadence).
  public static let readinessInterval = 0.15
  /// The load's timeout in app seconds (a WebView's default is 60).
  public static let loadTimeout = 60.0

  public let log: AppEventLog
  private let backend: any TorBackend
  private let scheduler: any AppScheduler
  private let socksPort: UInt16
  private let makeTorSession: @AppActor () -> NetworkSession
  private var queue = OnionBrowserLaunchQueue()
  private var session: NetworkSession?
  private var watch: ScheduledTimer?
  private var started = false

  public init(
    backend: any TorBackend, scheduler: any AppScheduler, log: AppEventLog, socksPort: UInt16,
    makeTorSession: @escaping @AppActor () -> NetworkSession
  ) {
    self.backend = backend
    self.scheduler = scheduler
    self.log = log
    self.socksPort = socksPort
    self.makeTorSession = makeTorSession
  }

  public var torConnected: Bool { queue.torConnected }

  /// App launch: start tor and watch its bootstrap.
  public func launch() {
    guard !started else { return }
    started = true
    let result = backend.start(dataDirectory: "", socksPort: socksPort)
    log.state("tor", "start", .int(Int(result)))
    watchBootstrap()
  }

  /// An incoming URL (`application(_:open:)`).
  public func openURL(_ url: String) {
    switch queue.open(url) {
    case .ignored:
      log.record(.request, ["url": .string(url), "phase": "ignored"])
    case .held(let web):
      log.record(
        .request, ["url": .string(web), "via": "tor", "phase": "held", "source": .string(url)])
    case .confirm(let web):
      log.record(
        .request, ["url": .string(web), "via": "tor", "phase": "confirm", "source": .string(url)])
    }
  }

  /// A path update: Onion Browser 2.X's RELOAD+NEWNYM through the controller.
  public func pathChanged() { backend.networkChanged() }

  /// App exit: the controller disables the network and closes (tor exits if it was ours).
  public func shutdown() async {
    watch?.cancel()
    session?.invalidateAndCancel()
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      backend.stop { continuation.resume() }
    }
  }

  public func perform(_ kind: AppAction.Kind) async {
    var fields: [String: EventValue] = ["action": .string(kind.name)]
    if let argument = kind.argument { fields["argument"] = .string(argument) }
    log.record(.action, fields)
    switch kind {
    case .start: launch()
    case .openURL(let url): openURL(url)
    case .pathChange: pathChanged()
    case .wait(let seconds): try? await scheduler.sleepOnClock(seconds)
    default:
      log.record(
        .error, ["message": .string("action '\(kind.name)' is not modelled for onion-browser")])
    }
  }

  private func watchBootstrap() {
    watch = scheduler.schedule(after: Self.readinessInterval) { [weak self] in
      guard let self else { return }
      if self.backend.bootstrapProgress() >= 100 {
        self.torDidConnect()
      } else {
        self.watchBootstrap()
      }
    }
  }

  /// 1.X: the first PROGRESS=100 loads the start URL (its home page is left out here).
  private func torDidConnect() {
    log.state("tor", "isReady", true)
    guard let url = queue.torDidConnect() else { return }
    let session = self.session ?? makeTorSession()
    self.session = session
    session.fetch(url, timeout: Self.loadTimeout) { _ in }
  }
}
