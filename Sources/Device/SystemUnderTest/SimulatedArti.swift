/// Arti's behaviour without sockets, on the app's scheduler: progress jumps from 0 to 100 when
/// bootstrap finishes, and the SOCKS port counts as bound only from then on; arti_stop sleeps
/// 200 ms. For deterministic tests and for driver runs that need no network.
@AppActor public final class SimulatedArti: TorBackend, SocksProbe {
  private let scheduler: any AppScheduler
  private var startedAt: Double?
  private var stopping = false
  /// Seconds from start to bootstrapped; nil means never (a censored network).
  public var bootstrapSeconds: Double?
  public private(set) var starts = 0
  public private(set) var stops = 0
  public private(set) var probeCount = 0
  /// When each probe ran, on the app's clock.
  public private(set) var probeTimes: [Double] = []
  public let supportsOnionServices = false

  public nonisolated init(scheduler: any AppScheduler, bootstrapSeconds: Double? = 5) {
    self.scheduler = scheduler
    self.bootstrapSeconds = bootstrapSeconds
  }

  public func start(dataDirectory: String, socksPort: UInt16) -> Int32 {
    if startedAt != nil { return -1 }
    startedAt = scheduler.now
    starts += 1
    return 0
  }

  public func stop(done: @escaping @AppActor () -> Void) {
    stopping = true
    stops += 1
    scheduler.schedule(after: 0.2) {
      self.startedAt = nil
      self.stopping = false
      done()
    }
  }

  public func isRunning() -> Bool { startedAt != nil }

  /// Whether bootstrap has finished (and the SOCKS port is bound).
  public var bootstrapped: Bool {
    guard let startedAt, let bootstrapSeconds, !stopping else { return false }
    return scheduler.now - startedAt >= bootstrapSeconds
  }

  public func bootstrapProgress() -> Int { bootstrapped ? 100 : 0 }

  public func bootstrapSummary() -> String {
    if stopping { return "Shutting down..." }
    guard startedAt != nil else { return "" }
    return bootstrapped ? "Ready" : "Bootstrapping..."
  }

  public func probeOnce(
    host: String, port: UInt16, timeout: Double, completion: @escaping @AppActor (Bool) -> Void
  ) {
    probeCount += 1
    probeTimes.append(scheduler.now)
    completion(bootstrapped)
  }
}
