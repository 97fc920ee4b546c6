import FailClosedSupport
import Foundation
import TorControl

/// An external C tor driven through its control port the way Onion Browser drives it (the ctor
/// personality: the mock's control port, or Debian's tor launched by DebianTorBackend):
/// ``OnionBrowserController`` on its own thread (AUTHENTICATE none, password or cookie;
/// SETEVENTS STATUS_CLIENT; SETCONF DisableNetwork=0 to start and =1 to stop; bootstrap polls
/// every 0.15 s; orconn-status heartbeats with SIGNAL HUP; RELOAD+NEWNYM on a network change;
/// the 15 s DisableNetwork cycle without bridges). TorManager reads the latest values; every
/// report and command (except polls and heartbeats) is a `tor` event in `log`.
@AppActor public final class ControlPortTorBackend: TorBackend {
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
  ///   - bridgesConfigured: tor uses bridges, so the stall guard never cycles DisableNetwork.
  ///   - takeOwnership: send TAKEOWNERSHIP, so tor exits when this connection closes (for a
  ///     tor the harness launched; Tor.framework does it for Onion Browser).
  ///   - timings: Onion Browser's numbers (tests shorten them).
  ///   - clock: real time for the controller's timers (tor runs at its own speed).
  public init(
    control: SocketAddress, authentication: Authentication, scheduler: any AppScheduler,
    log: AppEventLog? = nil, bridgesConfigured: Bool = false, takeOwnership: Bool = false,
    timings: OnionBrowserTimings = OnionBrowserTimings(), clock: any HarnessClock = SystemClock()
  ) {
    connection = OnionBrowserControlConnection(
      settings: .init(
        address: control, authentication: authentication, bridgesConfigured: bridgesConfigured,
        takeOwnership: takeOwnership, timings: timings),
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

  /// Onion Browser 2.X on an IP-stack change: SIGNAL RELOAD, then SIGNAL NEWNYM.
  public func networkChanged() { connection.networkChanged() }
}
