import FailClosedSupport
import Foundation
import OnionBrowserModel
import TLS
import TorControl

extension OnionBrowserRuntime {
  /// Throws a usage error naming --backend when the profile cannot run on it: Onion Browser
  /// drives tor through its control port.
  nonisolated static func checkBackend(_ options: AppDriver.Options) throws {
    guard options.backend == .ctor || options.backend == .tor else {
      throw AppActionError(
        "--profile \(options.profile.rawValue) drives tor through its control port: it needs "
          + "--backend ctor or tor, got --backend \(options.backend.rawValue)")
    }
  }

  /// The runtime `failclosed app --profile onion-browser-N` runs, and the app's own tor when
  /// --backend tor (the caller kills it on every exit path). With ctor the tor is someone
  /// else's (the mock's control port): no TAKEOWNERSHIP.
  @AppActor static func make(
    version: OnionBrowserVersion, options: AppDriver.Options, clock: any HarnessClock,
    log: AppEventLog, store: KeyValueStore, tls: TLSClient
  ) -> (OnionBrowserRuntime, DebianTorBackend?) {
    let scheduler: any AppScheduler =
      (clock as? ManualClock) ?? ClockScheduler.reportingLateness(clock: clock, log: log)
    let backend: any OnionBrowserRuntime.Backend
    var debianTor: DebianTorBackend?
    if options.backend == .tor, let configuration = options.tor {
      // Every version supports bridges (1.X in its torrc, 2.X and 3.X at start): the rules
      // that use the configured ones.
      let tor = DebianTorBackend(
        configuration: configuration, profile: .hardened, store: store, scheduler: scheduler,
        log: log, onionBrowser: version)
      debianTor = tor
      backend = tor
    } else {
      backend = ControlPortTorBackend(
        control: options.control ?? SocketAddress("127.0.0.1:9051")!,
        authentication: options.controlAuthentication, scheduler: scheduler, log: log,
        version: version, clock: AppDriver.controllerClock(clock))
    }
    let scale = options.timeScale
    log.record(
      .state,
      [
        "component": "app", "field": "profile", "value": .string(version.profileName),
        "backend": .string(options.backend.rawValue),
      ])
    let runtime = OnionBrowserRuntime(
      version: version, backend: backend, scheduler: scheduler, log: log, socks: options.socks,
      makeTorSession: { socks in
        StreamSession(
          connector: TorStreamConnector(socksEndpoint: socks, log: log), tls: tls, log: log,
          timeScale: scale)
      })
    return (runtime, debianTor)
  }
}
