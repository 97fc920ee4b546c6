import FailClosedSupport
import Foundation
import TLS

extension OnionBrowserRuntime {
  /// Throws a usage error naming --backend when the profile cannot run on it: Onion Browser
  /// drives tor through its control port.
  nonisolated static func checkBackend(_ options: AppDriver.Options) throws {
    guard options.backend == .ctor || options.backend == .tor else {
      throw AppActionError(
        "--profile onion-browser drives tor through its control port: it needs --backend ctor "
          + "or tor, got --backend \(options.backend.rawValue)")
    }
  }

  /// The runtime `failclosed app --profile onion-browser` runs, and the app's own tor when
  /// --backend tor (the caller kills it on every exit path). With ctor the controller takes
  /// ownership of tor (TAKEOWNERSHIP, as Tor.framework does: Onion Browser owns its tor).
  @AppActor static func make(
    options: AppDriver.Options, clock: any HarnessClock, log: AppEventLog, store: KeyValueStore,
    tls: TLSClient
  ) -> (OnionBrowserRuntime, DebianTorBackend?) {
    let scheduler: any AppScheduler = (clock as? VirtualScheduler) ?? ClockScheduler(clock: clock)
    let backend: any TorBackend
    var debianTor: DebianTorBackend?
    if options.backend == .tor, let configuration = options.tor {
      // Onion Browser 2.X supports bridges: the rules that use the configured ones.
      let tor = DebianTorBackend(
        configuration: configuration, profile: .hardened, store: store, scheduler: scheduler,
        log: log)
      debianTor = tor
      backend = tor
    } else {
      backend = ControlPortTorBackend(
        control: options.control ?? SocketAddress("127.0.0.1:9051")!,
        authentication: options.controlAuthentication, scheduler: scheduler, log: log,
        takeOwnership: true, clock: AppDriver.controllerClock(options))
    }
    let socks = options.socks
    let scale = options.timeScale
    log.record(
      .state,
      [
        "component": "app", "field": "profile", "value": "onion-browser",
        "backend": .string(options.backend.rawValue),
      ])
    let runtime = OnionBrowserRuntime(
      backend: backend, scheduler: scheduler, log: log, socksPort: socks.port,
      makeTorSession: {
        StreamSession(
          connector: TorStreamConnector(socksEndpoint: socks, log: log), tls: tls, log: log,
          timeScale: scale)
      })
    return (runtime, debianTor)
  }
}
