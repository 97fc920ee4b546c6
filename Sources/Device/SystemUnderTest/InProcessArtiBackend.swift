import FailClosedSupport
import MockTor

/// Arti in-process, as bitchat links it: the harness's MockTor with the arti personality,
/// started and stopped by TorManager (arti_start / arti_stop), progress and summary read from
/// it (0 or 100), SOCKS bound only once bootstrapped. Stop blocks 200 ms, as arti_stop does,
/// on a dedicated thread.
@AppActor public final class InProcessArtiBackend: TorBackend {
  private let makeConfiguration: @Sendable () -> MockTorConfiguration
  private let scheduler: any AppScheduler
  private var tor: MockTor?
  public let supportsOnionServices = false

  /// `configuration` is called at each start (a fresh mock per start, as arti_start makes a
  /// fresh runtime); its personality should be `.arti`.
  public init(
    scheduler: any AppScheduler, configuration: @escaping @Sendable () -> MockTorConfiguration
  ) {
    self.scheduler = scheduler
    self.makeConfiguration = configuration
  }

  public func start(dataDirectory: String, socksPort: UInt16) -> Int32 {
    if tor != nil { return -1 }
    do {
      let mock = try MockTor(makeConfiguration())
      try mock.start()
      tor = mock
      return 0
    } catch {
      return -3
    }
  }

  public func stop(done: @escaping @AppActor () -> Void) {
    guard let mock = tor else {
      scheduler.schedule(after: 0.2) { done() }
      return
    }
    BlockingIO.detach("failclosed.arti-stop") {
      mock.stop()
      Task { @AppActor in
        self.scheduler.schedule(after: 0.2) {
          if self.tor === mock { self.tor = nil }
          done()
        }
      }
    }
  }

  public func isRunning() -> Bool { tor != nil }
  public func bootstrapProgress() -> Int { tor?.bootstrapProgress ?? 0 }
  public func bootstrapSummary() -> String { tor?.bootstrapSummary ?? "" }
}
