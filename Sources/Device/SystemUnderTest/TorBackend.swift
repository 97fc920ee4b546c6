/// What TorManager drives: the shape of Arti's FFI (arti_start, arti_stop, arti_is_running,
/// arti_bootstrap_progress, arti_bootstrap_summary), implemented by the in-process mock (arti
/// personality), by an external tor behind its control port (ctor personality), and by
/// ``SimulatedArti`` for tests. Calls are synchronous, as the FFI's are; only stop, which
/// sleeps 200 ms inside Arti, reports back when done.
@AppActor public protocol TorBackend: AnyObject {
  /// arti_start: 0 started, -1 already running, -2 bad data directory, -3 runtime error.
  func start(dataDirectory: String, socksPort: UInt16) -> Int32
  /// arti_stop; calls `done` when it has returned (Arti sleeps 200 ms inside).
  func stop(done: @escaping @AppActor () -> Void)
  func isRunning() -> Bool
  /// 0...100; Arti reports only 0 or 100.
  func bootstrapProgress() -> Int
  /// Arti: "Starting...", "Configuring...", "Bootstrapping...", "Ready", "Shutting down...",
  /// "" or "Error: ...".
  func bootstrapSummary() -> String
  /// Whether this client can reach onion services (Arti as built by bitchat: no).
  var supportsOnionServices: Bool { get }
  /// The device's network changed (a path update). Control-port tors get SIGNAL RELOAD and
  /// NEWNYM (Onion Browser 2.X); Arti's FFI has nothing for it.
  func networkChanged()
}

extension TorBackend {
  public func networkChanged() {}
}

/// One SOCKS reachability probe: a TCP connect to the SOCKS endpoint with a timeout; the
/// answer comes back on the app actor.
@AppActor public protocol SocksProbe: AnyObject {
  func probeOnce(
    host: String, port: UInt16, timeout: Double, completion: @escaping @AppActor (Bool) -> Void)
}

extension String {
  /// The summary as it survives Arti's 256-byte C buffer (255 bytes and a NUL).
  func truncatedToSummaryBuffer() -> String {
    var bytes = Array(utf8.prefix(255))
    while !bytes.isEmpty, String(bytes: bytes, encoding: .utf8) == nil { bytes.removeLast() }
    return String(decoding: bytes, as: UTF8.self)
  }
}
