import FailClosedSupport
import Foundation

/// The real SOCKS probe: a TCP connect to the SOCKS endpoint with a timeout, on a dedicated
/// thread, closed at once. Each probe is logged as a socket (transport "probe") when it
/// connects.
@AppActor public final class SocketSocksProbe: SocksProbe {
  private let log: AppEventLog
  private let timeScale: Double

  public init(log: AppEventLog, timeScale: Double) {
    self.log = log
    self.timeScale = max(timeScale, 1e-6)
  }

  public func probeOnce(
    host: String, port: UInt16, timeout: Double, completion: @escaping @AppActor (Bool) -> Void
  ) {
    // A loopback connect succeeds or is refused at once; the floor only keeps a loaded
    // machine's scheduling delays from passing for an unreachable port.
    let realTimeout = max(timeout / timeScale, 0.25)
    let log = self.log
    BlockingIO.detach("failclosed.socks-probe") {
      var reachable = false
      if let address = SocketAddress(host: host, port: port),
        let socket = try? Socket.connect(to: address, timeout: realTimeout)
      {
        socket.close()
        reachable = true
        log.record(
          .socket,
          [
            "endpoint": .string(address.description), "transport": "probe",
            "purpose": "socks-probe",
          ])
      }
      Task { @AppActor in completion(reachable) }
    }
  }
}

/// Arti reached as an already running SOCKS endpoint (the mock with the arti personality,
/// started by the harness): Arti binds SOCKS only once bootstrapped, so progress is 100 exactly
/// when the port accepts connections and 0 before; start and stop only mark it in use (stop
/// takes Arti's 200 ms). A background thread watches the port.
@AppActor public final class ExternalArtiBackend: TorBackend {
  private let socks: SocketAddress
  private let scheduler: any AppScheduler
  private let watcher: PortWatcher
  private var running = false
  public let supportsOnionServices = false

  /// `clock`: the run's; on a event clock the watcher's polls are deadlines on it.
  public init(socks: SocketAddress, scheduler: any AppScheduler, clock: (any HarnessClock)? = nil) {
    self.socks = socks
    self.scheduler = scheduler
    watcher = PortWatcher(address: socks, clock: clock as? EventClock)
  }

  public func start(dataDirectory: String, socksPort: UInt16) -> Int32 {
    if running { return -1 }
    running = true
    watcher.start()
    return 0
  }

  public func stop(done: @escaping @AppActor () -> Void) {
    scheduler.schedule(after: 0.2) {
      self.running = false
      self.watcher.stop()
      done()
    }
  }

  public func isRunning() -> Bool { running }
  public func bootstrapProgress() -> Int { running && watcher.isOpen ? 100 : 0 }
  public func bootstrapSummary() -> String {
    guard running else { return "" }
    return watcher.isOpen ? "Ready" : "Bootstrapping..."
  }
}

/// Polls a TCP port every 100 ms (real time: it watches a state) on its own thread. On a
/// event clock the 100 ms are the clock's (100 ms times its scale, the same real time while
/// it does not jump): a jump never passes the next poll, so the port opening is seen as soon
/// after it, in the run's time, as without jumps.
final class PortWatcher: @unchecked Sendable {
  private let address: SocketAddress
  private let clock: EventClock?
  private let lock = NSLock()
  private var open = false
  private var generation = 0
  private var active = false

  init(address: SocketAddress, clock: EventClock? = nil) {
    self.address = address
    self.clock = clock
  }

  var isOpen: Bool { lock.withLock { open } }

  func start() {
    let current: Int = lock.withLock {
      generation += 1
      active = true
      return generation
    }
    let address = self.address
    BlockingIO.detach("failclosed.port-watch") { [self] in
      while lock.withLock({ active && generation == current }) {
        let reachable =
          (try? Socket.connect(to: address, timeout: 0.5)).map { socket in
            socket.close()
            return true
          } ?? false
        lock.withLock { open = reachable }
        if let clock {
          clock.sleepBlocking(seconds: 0.1 * clock.factor)
        } else {
          SystemClock().sleepBlocking(seconds: 0.1)
        }
      }
    }
  }

  func stop() {
    lock.withLock {
      active = false
      open = false
    }
  }
}
