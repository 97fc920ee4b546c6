import FailClosedSupport
import Foundation
import TorControl

/// Runs a pure ``BootstrapSimulator`` against a ``HarnessClock`` for a live mock: plan time stands
/// still while DisableNetwork is 1, each ``advance()`` turns the simulator's new events into 650
/// events for an attached ``ControlPortListener`` and into ``Hooks`` calls for the mock (event
/// log, SOCKS gating, crash). It is the ``ControlPortBackend`` of a ctor control port.
public final class BootstrapDriver: ControlPortBackend, @unchecked Sendable {
  /// Callbacks into the mock; each runs on the thread that caused it (ticker or listener).
  public struct Hooks: Sendable {
    public var event: (@Sendable (BootstrapEvent) -> Void)?
    public var command: (@Sendable (ControlCommandRecord, SocketAddress?) -> Void)?
    public var signal: (@Sendable (String) -> Void)?
    public var disableNetwork: (@Sendable (Bool) -> Void)?

    public init(
      event: (@Sendable (BootstrapEvent) -> Void)? = nil,
      command: (@Sendable (ControlCommandRecord, SocketAddress?) -> Void)? = nil,
      signal: (@Sendable (String) -> Void)? = nil,
      disableNetwork: (@Sendable (Bool) -> Void)? = nil
    ) {
      self.event = event
      self.command = command
      self.signal = signal
      self.disableNetwork = disableNetwork
    }
  }

  /// Signals after which a tor client exits at once (tor: SIGINT and SIGTERM for a non-relay).
  public static let exitSignals: Set<String> = ["SHUTDOWN", "HALT", "TERM", "INT"]
  /// Signals after which tor re-reads its configuration: options set by SETCONF give way to the
  /// torrc's again (Debian's tor 0.4.9.11 with `DisableNetwork 1` in its torrc closes its SOCKS
  /// listener and every connection on RELOAD or HUP, while status/bootstrap-phase still says
  /// PROGRESS=100).
  public static let reloadSignals: Set<String> = ["RELOAD", "HUP"]

  public let simulator: BootstrapSimulator
  public let clock: any HarnessClock
  public let torVersion: String
  /// DisableNetwork as "the torrc" says: the value at start, restored by a reload.
  public let configuredDisableNetwork: Bool
  private let hooks: Hooks
  private let lock = NSLock()
  private var timeline: BootstrapTimeline
  private var lastPlanTime = -1.0
  private var state = BootstrapState.initial
  private var listeners: [ControlPortListener] = []
  private var socks: [String]
  private var receivedSignals: [String] = []
  private var exited = false
  private var ticking = false
  private let tickerDone = DispatchSemaphore(value: 0)
  private let realTime = SystemClock()

  /// `origin`: the clock's time of plan time 0 (nil: now).
  public init(
    simulator: BootstrapSimulator, clock: any HarnessClock, origin: Double? = nil,
    disableNetwork: Bool = false,
    socksListeners: [String] = [], torVersion: String = ControlSession.defaultTorVersion,
    hooks: Hooks = Hooks()
  ) {
    self.simulator = simulator
    self.clock = clock
    self.torVersion = torVersion
    self.configuredDisableNetwork = disableNetwork
    self.hooks = hooks
    socks = socksListeners
    timeline = BootstrapTimeline(origin: origin ?? clock.now, networkDisabled: disableNetwork)
  }

  /// Sends this driver's events to `listener` (and drops its connections on a crash).
  public func attach(_ listener: ControlPortListener) {
    lock.withLock { listeners.append(listener) }
  }

  public var currentState: BootstrapState { lock.withLock { state } }
  public var planTime: Double { lock.withLock { timeline.planTime(at: clock.now) } }
  public var isNetworkDisabled: Bool { lock.withLock { timeline.networkDisabled } }
  /// Signals received over the control port, in order.
  public var signals: [String] { lock.withLock { receivedSignals } }
  /// True after a crash or an exit signal: the simulated process is gone.
  public var hasExited: Bool { lock.withLock { exited || state.crashed } }

  public var socksListeners: [String] {
    get { lock.withLock { socks } }
    set { lock.withLock { socks = newValue } }
  }

  /// Moves to the clock's current time and delivers the events in between; returns them.
  @discardableResult
  public func advance() -> [BootstrapEvent] {
    let (events, targets, crashedNow) = lock.withLock {
      () -> ([BootstrapEvent], [ControlPortListener], Bool) in
      guard !exited else { return ([], [], false) }
      let now = timeline.planTime(at: clock.now)
      guard now > lastPlanTime else { return ([], [], false) }
      let events = simulator.events(after: lastPlanTime, through: now)
      lastPlanTime = now
      let wasCrashed = state.crashed
      for event in events { BootstrapSimulator.apply(event, to: &state) }
      return (events, listeners, !wasCrashed && state.crashed)
    }
    if !events.isEmpty {
      let controlEvents = events.flatMap(ControlAsyncEvent.events(for:))
      for listener in targets { listener.publish(controlEvents) }
      for event in events { hooks.event?(event) }
    }
    if crashedNow {
      for listener in targets {
        listener.dropConnections(flush: false)
        listener.stop()
      }
    }
    return events
  }

  /// Calls ``advance()`` every `interval` real seconds on a dedicated thread until ``stop()``
  /// (a poll: the plan's steps fall on the clock, whatever the interval).
  public func start(interval: Double = 0.02) {
    let first = lock.withLock {
      defer { ticking = true }
      return !ticking
    }
    guard first else { return }
    BlockingIO.detach("mocktor.bootstrap") { [self] in
      while lock.withLock({ ticking }) {
        advance()
        realTime.sleepBlocking(seconds: interval)
      }
      tickerDone.signal()
    }
  }

  public func stop() {
    let wasTicking = lock.withLock {
      defer { ticking = false }
      return ticking
    }
    if wasTicking { tickerDone.wait() }
  }

  // MARK: - ControlPortBackend

  public func controlContext() -> ControlContext {
    lock.withLock {
      let ready = state.isReady
      let relays = simulator.relays
      let names = ["guard", "middle", "exit"]
      let path = (0..<3).map { index in
        "$\(relays[index % relays.count].fingerprint)~mock\(names[index])"
      }
      return ControlContext(
        bootstrapPhase: ControlAsyncEvent.bootstrapPhaseLine(state),
        socksListeners: timeline.networkDisabled ? [] : socks,
        orconnStatus: ready ? ["\(path[0]) CONNECTED"] : [],
        circuitStatus: ready
          ? ["1 BUILT \(path.joined(separator: ",")) BUILD_FLAGS=NEED_CAPACITY PURPOSE=GENERAL"]
          : [],
        circuitEstablished: ready, disableNetwork: timeline.networkDisabled,
        torVersion: torVersion)
    }
  }

  public func setDisableNetwork(_ disabled: Bool) {
    lock.withLock { timeline.setNetworkDisabled(disabled, at: clock.now) }
    hooks.disableNetwork?(disabled)
  }

  public func controlSignal(_ name: String) {
    let exits = BootstrapDriver.exitSignals.contains(name)
    let targets = lock.withLock {
      receivedSignals.append(name)
      if exits { exited = true }
      return listeners
    }
    if BootstrapDriver.reloadSignals.contains(name) && isNetworkDisabled != configuredDisableNetwork
    {
      setDisableNetwork(configuredDisableNetwork)
    }
    hooks.signal?(name)
    if exits {
      // The "250 OK" is already queued; the listener flushes it before closing.
      for listener in targets { listener.stop() }
    }
  }

  public func controlCommandHandled(_ record: ControlCommandRecord, peer: SocketAddress?) {
    hooks.command?(record, peer)
  }
}
