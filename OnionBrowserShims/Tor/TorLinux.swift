import Foundation

/// What stands in for the tor inside Onion Browser's process, and where the shim reports what
/// it sees on the control connection. Not Tor.framework's: the driver sets it before the app's
/// code runs (docs/onion-browser-source.md).
///
/// Tor.framework runs tor inside the app (TORThread.m l.52-69: tor_run_main on a thread). On
/// Linux the harness's tor is a process of its own:
/// - `external`: a tor that is already running with its control port at HOST:PORT (the mock
///   Tor's ctor personality on the mock lane). TorThread writes the files tor would write in
///   the data directory (the control port file, the cookie, the lock) and stands for it.
/// - `debianTor`: Debian's tor, started by TorThread from the TorConfiguration the app built,
///   after the private network's base torrc (its DirAuthority lines), pinned as arti.h's
///   backend pins it (DebianTorArtiConfiguration), with `DisableNetwork 1` until the app's
///   controller is ready.
public enum TorLinux {
  public enum Backend: Sendable, Equatable {
    case external(host: String, port: UInt16)
    case debianTor(baseTorrc: String, logDirectory: String, binary: String)
  }

  private static let lock = NSLock()
  nonisolated(unsafe) private static var currentBackend = Backend.external(
    host: "127.0.0.1", port: 39051)
  nonisolated(unsafe) private static var sink: (@Sendable (String, [String: String]) -> Void)?

  public static var backend: Backend {
    get { lock.withLock { currentBackend } }
    set { lock.withLock { currentBackend = newValue } }
  }

  /// Where the shim's observations go (the driver's event stream): `tor` events with a phase
  /// (`command`, `reply`, `bootstrap`, `process`, `harness`).
  public static func setReporter(_ reporter: @escaping @Sendable (String, [String: String]) -> Void)
  {
    lock.withLock { sink = reporter }
  }

  static func report(_ phase: String, _ fields: [String: String] = [:]) {
    let reporter = lock.withLock { sink }
    var all = fields
    all["phase"] = phase
    reporter?("tor", all)
  }

  /// Whether the harness launched tor itself (the debianTor backend): then the controller
  /// takes ownership of it after authenticating (OnionBrowserHarnessDeviation.takeOwnership).
  static var harnessLaunchedTor: Bool {
    if case .debianTor = backend { return true }
    return false
  }
}
