import FailClosedSupport
import Foundation
import OnionBrowserModel
import TorControl

/// What Onion Browser's runtime reads from and tells its tor, beyond Arti's FFI shape: the
/// version's readiness, the SOCKS listener (3.X), the guard's expiry (2.X), and the app's
/// lifecycle (background, active again) and network changes.
@AppActor public protocol OnionBrowserTorControl: AnyObject {
  var browserState: OnionBrowserTorState { get }
  func networkChanged(reachable: Bool)
  func appDidEnterBackground()
  func appDidBecomeActive()
}

/// A snapshot of the controller's view of tor for the runtime.
public struct OnionBrowserTorState: Equatable, Sendable {
  public var progress = 0
  /// The version's "Tor is ready" (1.X 100 %, 2.X circuit established, 3.X also the SOCKS
  /// listener).
  public var ready = false
  /// 3.X: tor's SOCKS listener ("127.0.0.1:39050").
  public var socks: String?
  /// 2.X: the connection guard expired.
  public var stalled = false
  /// 1.X exited / 3.X gave up: the reason.
  public var gaveUp: String?
}

/// An external C tor driven through its control port the way one Onion Browser version drives
/// it (the ctor personality: the mock's control port, or Debian's tor launched by
/// DebianTorBackend): ``OnionBrowserController`` on its own thread. TorManager (bitchat's model
/// over a control-port tor) reads progress and summary; Onion Browser's runtime also reads
/// ``browserState``. Every report and command (except 1.X's polls and heartbeats) is a `tor`
/// event in `log`.
@AppActor public final class ControlPortTorBackend: TorBackend, OnionBrowserTorControl {
  public enum Authentication: Sendable {
    case none
    case password(String)
    case cookieFile(String)
  }

  private let connection: OnionBrowserControlConnection
  private let scheduler: any AppScheduler
  public let supportsOnionServices = true

  /// - Parameters:
  ///   - log: where `tor` events go (nil: nowhere).
  ///   - version: which Onion Browser drives tor.
  ///   - bridgesConfigured: tor uses bridges, so 2.X's guard never cycles DisableNetwork.
  ///   - deviation: the harness's own steps for its tor (OnionBrowserHarnessDeviation).
  ///   - timings: Onion Browser's numbers (tests shorten them).
  ///   - stopDisablesNetwork: bitchat over someone else's tor: arti_stop stops Arti, so stop
  ///     ends with `SETCONF DisableNetwork=1` before the app's own ending (not Onion Browser's).
  ///   - clock: real time for the controller's timers (tor runs at its own speed).
  public init(
    control: SocketAddress, authentication: Authentication, scheduler: any AppScheduler,
    log: AppEventLog? = nil, version: OnionBrowserVersion = .v1, bridgesConfigured: Bool = false,
    deviation: OnionBrowserHarnessDeviation = OnionBrowserHarnessDeviation(),
    timings: OnionBrowserTimings = OnionBrowserTimings(), stopDisablesNetwork: Bool = false,
    clock: any HarnessClock = SystemClock()
  ) {
    connection = OnionBrowserControlConnection(
      settings: .init(
        address: control, authentication: authentication, version: version,
        bridgesConfigured: bridgesConfigured, deviation: deviation, timings: timings,
        stopDisablesNetwork: stopDisablesNetwork),
      clock: clock, log: log)
    self.scheduler = scheduler
  }

  public func start(dataDirectory: String, socksPort: UInt16) -> Int32 {
    connection.start() ? 0 : -1
  }

  public func stop(done: @escaping @AppActor () -> Void) {
    let connection = self.connection
    BlockingIO.detach("failclosed.control-stop") {
      connection.stop()
      Task { @AppActor in done() }
    }
  }

  public func isRunning() -> Bool { connection.isRunning }
  public func bootstrapProgress() -> Int { connection.state.progress }
  public func bootstrapSummary() -> String { connection.state.summary }
  /// tor's TAG for the latest phase ("" before the first report).
  public func bootstrapTag() -> String { connection.state.tag }

  public var browserState: OnionBrowserTorState {
    let state = connection.state
    return OnionBrowserTorState(
      progress: state.progress, ready: state.ready, socks: state.socks, stalled: state.stalled,
      gaveUp: state.gaveUp)
  }

  /// A path update (TorBackend): as a reachable network.
  public func networkChanged() { networkChanged(reachable: true) }
  public func networkChanged(reachable: Bool) {
    connection.request(.networkChanged(reachable: reachable))
  }
  public func appDidEnterBackground() { connection.request(.background) }
  public func appDidBecomeActive() { connection.request(.foreground) }
}
