import FailClosedSupport
import Foundation
import SOCKS
import TorControl

/// A Tor client that real SOCKS clients cannot tell from one: a SOCKS listener with a
/// personality, a simulated bootstrap, a destination map and per-destination faults, and a
/// JSON-lines event log. Used by tests, the sandbox, the system under test and
/// `failclosed mock-tor`.
///
///     let mock = try MockTor(MockTorConfiguration(personality: .ctor, socksAddress: address))
///     try mock.start()
///     defer { mock.stop() }
public final class MockTor: @unchecked Sendable {
  public let configuration: MockTorConfiguration
  public let eventLog: MockTorEventLog
  private let bootstrap: BootstrapSimulator
  private let lock = NSLock()
  private var listener: SOCKSListener?
  private var origin: Double = 0
  private var running = false
  private var crashed = false
  private var lastBootstrap: BootstrapState?
  /// The bootstrap state from plan time `from` until `until` (see ``bootstrapState``), and
  /// whether it carries streams, kept apart so asking costs no copy of its strings.
  private var keptState: (from: Double, until: Double, state: BootstrapState)?
  private var keptReady: (from: Double, until: Double, ready: Bool)?
  private var streams = 0
  private var waitingForBootstrap = 0
  private var peak = 0
  private var bindError: (any Error)?
  private let monitorDone = DispatchSemaphore(value: 0)

  public init(_ configuration: MockTorConfiguration) throws {
    if !configuration.socksAddress.isLoopback && !configuration.allowNonLoopback {
      throw MockTorError.nonLoopbackAddress(configuration.socksAddress.description)
    }
    self.configuration = configuration
    self.eventLog = try MockTorEventLog(path: configuration.eventLogPath)
    self.bootstrap = BootstrapSimulator(
      plan: configuration.bootstrapPlan,
      personality: configuration.personality == .arti ? .arti : .ctor)
  }

  deinit { stop() }

  // MARK: state

  /// Seconds of the configured clock since ``start()``.
  public var planTime: Double { configuration.clock.now - lock.withLock { origin } }

  /// The bootstrap's state now. Kept until the plan's next event: the loops ask for every
  /// request, and the plan's timeline made anew each time cost each connection about 2% of
  /// its CPU (a flapping plan's up to 100,000 events each time).
  public var bootstrapState: BootstrapState {
    let now = planTime
    if let kept = lock.withLock({ keptState }), now >= kept.from, now < kept.until {
      return kept.state
    }
    let (state, next) = bootstrap.stateAndNextChange(at: now)
    lock.withLock {
      keptState = (now, next ?? .infinity, state)
      keptReady = (now, next ?? .infinity, state.isReady)
    }
    return state
  }
  public var bootstrapProgress: Int { bootstrapState.progress }
  public var bootstrapSummary: String { bootstrapState.summary }
  /// Running, not crashed and bootstrapped: asked for every request, so one lock and no
  /// state copied while the plan's kept answer holds.
  public var isReady: Bool {
    let now = configuration.clock.now
    let kept: Bool? = lock.withLock {
      guard running && !crashed else { return false }
      let plan = now - origin
      guard let kept = keptReady, plan >= kept.from, plan < kept.until else { return nil }
      return kept.ready
    }
    if let kept { return kept }
    return lock.withLock { running && !crashed } && bootstrapState.isReady
  }

  /// The SOCKS listener's address once bound (arti binds only after bootstrapping).
  public var socksAddress: SocketAddress? { lock.withLock { listener?.address } }

  var isStoppedOrCrashed: Bool { lock.withLock { !running || crashed } }

  /// ctor streams held until the bootstrap completes (tor's pending streams), each with its
  /// wait limit already counted from the plan time it arrived: what a test on a manual clock
  /// waits for before it moves the time, instead of sleeping and hoping the stream got there.
  public var streamsWaitingForBootstrap: Int { lock.withLock { waitingForBootstrap } }

  func streamWaitsForBootstrap(_ waiting: Bool) {
    lock.withLock { waitingForBootstrap += waiting ? 1 : -1 }
  }

  /// Connections held right now (handshaking plus streaming) and the most ever held.
  public var connectionCounts: (current: Int, peak: Int) {
    lock.withLock {
      let current = (listener?.currentPending ?? 0) + streams
      peak = max(peak, current)
      return (current, peak)
    }
  }

  // MARK: lifecycle

  /// Starts the bootstrap clock and (ctor) the SOCKS listener; arti's listener binds when the
  /// bootstrap reaches 100.
  public func start() throws {
    let alreadyRunning = lock.withLock {
      if running { return true }
      running = true
      origin = configuration.planOrigin ?? configuration.clock.now
      return false
    }
    if alreadyRunning { return }
    BlockingIO.ignoreSIGPIPE()
    Self.raiseDescriptorLimit()
    eventLog.record(
      "start", time: planTime,
      [
        "personality": .string(configuration.personality.rawValue),
        "plan": .string(configuration.bootstrapPlan.description),
        "socks": .string(configuration.socksAddress.description),
      ])
    if configuration.personality == .ctor {
      do { try bindListener() } catch {
        lock.withLock { running = false }
        throw error
      }
    }
    BlockingIO.detach("mocktor.monitor") { [self] in
      monitor()
      monitorDone.signal()
    }
  }

  /// Closes the listener and every connection; streams log their end. Idempotent.
  public func stop() {
    let (wasRunning, currentListener) = lock.withLock {
      let was = running
      running = false
      let current = listener
      listener = nil
      return (was, current)
    }
    guard wasRunning else { return }
    currentListener?.stop()
    monitorDone.wait()
    // Streams notice within their 100 ms poll; give them a moment (real time) to log.
    let realTime = SystemClock()
    while lock.withLock({ streams }) > 0 && realTime.now < 1 {
      realTime.sleepBlocking(seconds: 0.02)
    }
    eventLog.record("stop", time: planTime)
  }

  /// Waits (real time, bounded) until the SOCKS listener is bound; for arti after bootstrap.
  @discardableResult
  public func waitForListener(timeout: Double = 10) -> SocketAddress? {
    let realTime = SystemClock()
    while realTime.now < timeout {
      if let address = socksAddress { return address }
      if lock.withLock({ bindError != nil || !running }) { return nil }
      realTime.sleepBlocking(seconds: 0.01)
    }
    return socksAddress
  }

  /// Arti binds its SOCKS port once bootstrapped. A bind that fails (the port held: a client's
  /// connect to the unbound port can take it as its own source port where the ephemeral range
  /// holds 39050, as Linux's does; the harness's device namespace uses Apple's range, and
  /// Socket.connect closes such a connection with RST, leaving no TIME_WAIT) is logged once
  /// and tried again at the next poll; a run whose mock never listened is inconclusive
  /// (MockLane), never the app's failure.
  private func bindAfterBootstrap() {
    let failedBefore = lock.withLock { bindError != nil }
    do {
      try bindListener()
      lock.withLock { bindError = nil }
    } catch {
      if !failedBefore {
        eventLog.record("listener-error", time: planTime, ["error": .string("\(error)")])
      }
    }
  }

  private func bindListener() throws {
    let policy = configuration.personality.socksPolicy
    let newListener: SOCKSListener
    do {
      newListener = try SOCKSListener(
        address: configuration.socksAddress, policy: policy, clock: configuration.clock,
        handshakeTimeout: configuration.handshakeTimeout,
        maxPending: configuration.maxConnections, loops: configuration.socksLoopThreads,
        context: SOCKSListener.StreamContext(
          configuration: configuration, eventLog: eventLog, origin: lock.withLock { origin }),
        route: { [weak self] request in
          guard let self else { return .thread }
          return StreamRoute.of(request, ready: isReady, configuration)
        },
        onRequest: { [weak self] socket, request, early, peer in
          self?.startStream(socket, request, early, peer)
        },
        onReject: { [weak self] error, peer in
          guard let self else { return }
          var fields: [String: EventLogValue] = ["error": .string(error.description)]
          if let peer { fields["client"] = .string(peer.description) }
          eventLog.record("socks_rejected", time: planTime, fields)
        })
    } catch let error as SystemError {
      lock.withLock { bindError = error }
      throw MockTorError.listen(error.description)
    }
    lock.withLock { listener = newListener }
    newListener.start()
    eventLog.record("listener", time: planTime, ["socks": .string(newListener.address.description)])
  }

  private func startStream(
    _ socket: Socket, _ request: SOCKSRequest, _ early: [UInt8], _ peer: SocketAddress?
  ) {
    let session = SOCKSStreamRelay(
      client: socket, request: request, early: early, peer: peer, mock: self)
    lock.withLock {
      streams += 1
      peak = max(peak, streams + (listener?.currentPending ?? 0))
    }
    BlockingIO.detach("mocktor.stream") { [self] in
      session.run()
      lock.withLock { streams -= 1 }
    }
  }

  /// Follows the bootstrap: logs each step, binds arti's listener at 100, and on a crash
  /// closes everything the way a dying process would.
  private func monitor() {
    while lock.withLock({ running }) {
      let state = bootstrapState
      let changed = lock.withLock {
        defer { lastBootstrap = state }
        return lastBootstrap != state
      }
      if changed {
        eventLog.record(
          "bootstrap", time: planTime,
          [
            "progress": .int(state.progress), "tag": .string(state.tag),
            "summary": .string(state.summary),
          ])
      }
      if state.crashed {
        let current = lock.withLock {
          crashed = true
          defer { listener = nil }
          return listener
        }
        current?.stop()
        eventLog.record("crash", time: planTime)
        return
      }
      if configuration.personality == .arti, state.isReady, socksAddress == nil {
        bindAfterBootstrap()
      }
      _ = connectionCounts
      // A real-time poll: it watches the plan, whose steps fall on the clock. On a skipping
      // clock the plan's next step is a deadline on it, so no jump passes it.
      if let skipping = configuration.clock as? EventClock {
        let now = planTime
        let next = bootstrap.events(after: now, through: now + 3600).first?.time ?? now + 3600
        skipping.sleepBlocking(seconds: next - now, realCap: 0.02)
      } else {
        Self.pollInterval.sleepBlocking(seconds: 0.02)
      }
    }
  }

  /// Sleeps for `seconds` of the configured clock from a dedicated thread (real clocks
  /// sleep without the cooperative pool, which blocked tests may hold).
  func sleep(_ seconds: Double) {
    configuration.clock.sleepBlocking(seconds: seconds)
  }

  /// The clock of the mock's state polls (a bound listener, a finished bootstrap): real time.
  static let pollInterval = SystemClock()

  /// Isolation credentials as logged: the kind, and the bytes as text (lossy UTF-8).
  static func describe(_ authentication: SOCKSAuthentication) -> EventLogValue {
    func text(_ bytes: [UInt8]) -> EventLogValue { .string(String(decoding: bytes, as: UTF8.self)) }
    switch authentication.isolation {
    case .none: return .null
    case .legacy(let username, let password):
      return .object(["kind": "legacy", "username": text(username), "password": text(password)])
    case .key(let key): return .object(["kind": "key", "key": text(key)])
    case .rpcObject(let id, let password):
      return .object(["kind": "rpc", "id": text(id), "password": text(password)])
    case .malformed(let username):
      return .object(["kind": "malformed", "username": text(username)])
    }
  }

  /// Thousands of connections need thousands of descriptors: lift the soft limit to the hard.
  static func raiseDescriptorLimit() {
    var limit = rlimit()
    guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
    if limit.rlim_cur < limit.rlim_max {
      limit.rlim_cur = limit.rlim_max
      _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
  }
}
