import TorControl

/// Which Tor client the simulator imitates.
public enum BootstrapPersonality: String, Hashable, Sendable, CaseIterable {
  /// bitchat's in-process Arti: progress only 0 or 100, summaries "Starting...",
  /// "Bootstrapping...", "Ready"; no control port, so no warnings.
  case arti
  /// C tor as Onion Browser drives it: tor's phase table and WARN BOOTSTRAP events.
  case ctor
}

/// A pure model of a Tor client bootstrapping under a ``BootstrapPlan``: given plan time in
/// seconds (0 = process start) it answers the state and the events in between. No clock, no
/// threads: the mock and the tests choose the times.
///
/// Timings (seconds of plan time; a ScaledClock compresses them):
/// - healthy(T), ctor: the 18 direct phases (starting ... done) evenly spaced over T, then
///   CIRCUIT_ESTABLISHED at T. arti: "Starting..." at 0, "Bootstrapping..." at T/5,
///   100 "Ready" at T.
/// - stalled(tag), ctor: one phase every ``stepSeconds`` (0.5 s) up to `tag`, where it stays.
///   With `.connectRefused` (relays reset the TCP connection) a problem is reported every
///   ``refusedIntervalSeconds`` (1.6 s) from the stall on, so COUNT reaches tor's threshold of
///   10 (RECOMMENDATION=warn) 16 s in, as measured against tor 0.4.9 in the private network.
///   With `.timeout` (packets dropped) the first problem comes ``timeoutFirstSeconds`` (133 s,
///   as measured) after the stall and one more every ``timeoutIntervalSeconds`` (20 s): the
///   count grows slowly, reaching 10 at 313 s. arti: "Bootstrapping..." forever, no warnings.
/// - recovering(tag, failure, U): the stall above until U (its problem reports too), then the
///   remaining phases one every ``stepSeconds`` to 100% (arti: "Ready" at U).
/// - neverStarting: 0% "starting" forever.
/// - flapping(P): healthy(P), then the network goes down at 2P, up at 3P, down at 4P ...
///   ctor stays at 100% and reports CIRCUIT_NOT_ESTABLISHED / CIRCUIT_ESTABLISHED (tor never
///   goes back in progress); arti drops back to 0 "Bootstrapping..." and returns to 100.
/// - crash(C): healthy(5) cut short by a crash at C; nothing after it.
public struct BootstrapSimulator: Sendable {
  public let plan: BootstrapPlan
  public let personality: BootstrapPersonality
  public let relays: [RelayIdentity]

  public static let stepSeconds = 0.5
  public static let refusedIntervalSeconds = 1.6
  public static let timeoutFirstSeconds = 133.0
  public static let timeoutIntervalSeconds = 20.0
  /// tor's BOOTSTRAP_PROBLEM_THRESHOLD: from this count on RECOMMENDATION is "warn".
  public static let problemThreshold = 10
  /// Upper bound on events generated for one query, so a far-future time cannot hang a caller.
  public static let maximumEvents = 100_000

  /// Relays named in warnings when the caller gives none (loopback guards of the mock).
  public static let defaultRelays: [RelayIdentity] = [
    RelayIdentity(
      fingerprint: "8E2A6B0F4C1D3E5A7B9C0D1E2F3A4B5C6D7E8F90", address: "127.0.0.1:9001"),
    RelayIdentity(
      fingerprint: "1F3B5D7E9A0C2E4F6A8B0C1D3E5F7A9B0C2D4E6F", address: "127.0.0.1:9002"),
    RelayIdentity(
      fingerprint: "C4D6E8F0A1B3C5D7E9F1A2B4C6D8E0F2A3B5C7D9", address: "127.0.0.1:9003"),
  ]

  public static let artiStarting = BootstrapPhase(
    progress: 0, tag: "starting", summary: "Starting...")
  public static let artiBootstrapping = BootstrapPhase(
    progress: 0, tag: "bootstrapping", summary: "Bootstrapping...")
  public static let artiReady = BootstrapPhase(progress: 100, tag: "done", summary: "Ready")

  public init(
    plan: BootstrapPlan, personality: BootstrapPersonality,
    relays: [RelayIdentity] = BootstrapSimulator.defaultRelays
  ) {
    self.plan = plan
    self.personality = personality
    self.relays = relays.isEmpty ? BootstrapSimulator.defaultRelays : relays
  }

  /// The state at plan time `time` (events at exactly `time` have happened).
  public func state(at time: Double) -> BootstrapState {
    var state = BootstrapState.initial
    for event in timeline(through: time) {
      BootstrapSimulator.apply(event, to: &state)
    }
    return state
  }

  /// The state at plan time `time`, and the plan time of the next event after it (nil: none
  /// ever): the state holds until then, so a caller asking often can keep it that long.
  public func stateAndNextChange(at time: Double) -> (state: BootstrapState, nextChange: Double?) {
    var next: Double?
    var state = BootstrapState.initial
    for event in timeline(through: time, next: &next) {
      BootstrapSimulator.apply(event, to: &state)
    }
    return (state, next)
  }

  /// Events with `start < time <= end`, in order.
  public func events(after start: Double, through end: Double) -> [BootstrapEvent] {
    guard end > start else { return [] }
    return timeline(through: end).filter { $0.time > start }
  }

  /// Events with `time <= end` (the first one, "starting", is at time 0).
  public func events(through end: Double) -> [BootstrapEvent] {
    timeline(through: end)
  }

  public static func apply(_ event: BootstrapEvent, to state: inout BootstrapState) {
    switch event.kind {
    case .progress(let phase):
      state.phase = phase
      state.lastWarning = nil
      state.networkUp = phase.progress == 100
    case .warning(let warning):
      state.lastWarning = warning
    case .networkUp:
      state.networkUp = true
    case .networkDown:
      state.networkUp = false
    case .crashed:
      state.crashed = true
      state.networkUp = false
    }
  }

  // MARK: - Timeline

  private func timeline(through end: Double) -> [BootstrapEvent] {
    var next: Double?
    return timeline(through: end, next: &next)
  }

  /// The events through `end`; `next` gets the time of the first one generated past it (each
  /// plan generates in time order, so the first refused is the next to come).
  private func timeline(through end: Double, next: inout Double?) -> [BootstrapEvent] {
    guard end >= 0 else {
      next = 0
      return []
    }
    var events: [BootstrapEvent] = []
    var firstPast: Double?
    defer { next = firstPast }
    func add(_ time: Double, _ kind: BootstrapEvent.Kind) -> Bool {
      if time > end {
        firstPast = min(firstPast ?? time, time)
        return false
      }
      guard events.count < BootstrapSimulator.maximumEvents else {
        // Cut short: what comes next is unknown, so nothing may be kept past now.
        firstPast = min(firstPast ?? time, time)
        return false
      }
      events.append(BootstrapEvent(time: time, kind: kind))
      return true
    }
    switch plan {
    case .healthy(let seconds):
      addHealthy(seconds: seconds, add)
    case .neverStarting:
      _ = add(0, .progress(personality == .arti ? Self.artiStarting : .starting))
    case .stalled(let tag, let failure):
      addStall(tag: tag, failure: failure, add)
    case .recovering(let tag, let failure, let until):
      addStall(tag: tag, failure: failure) { time, kind in time < until ? add(time, kind) : false }
      addRecovery(from: tag, at: until, add)
    case .flapping(let period):
      addHealthy(seconds: period, add)
      var time = 2 * period
      var down = true
      while true {
        let kind: BootstrapEvent.Kind
        switch (personality, down) {
        case (.arti, true): kind = .progress(Self.artiBootstrapping)
        case (.arti, false): kind = .progress(Self.artiReady)
        case (.ctor, true): kind = .networkDown(reason: "DIR_ALL_UNREACHABLE")
        case (.ctor, false): kind = .networkUp
        }
        guard add(time, kind) else { break }
        down.toggle()
        time += period
      }
    case .crash(let after):
      addHealthy(seconds: BootstrapPlan.defaultHealthySeconds) { time, kind in
        time < after ? add(time, kind) : false
      }
      _ = add(after, .crashed)
    }
    return events
  }

  private func addHealthy(
    seconds: Double, _ add: (Double, BootstrapEvent.Kind) -> Bool
  ) {
    switch personality {
    case .arti:
      guard add(0, .progress(Self.artiStarting)) else { return }
      guard seconds > 0 else {
        _ = add(0, .progress(Self.artiReady))
        return
      }
      guard add(seconds / 5, .progress(Self.artiBootstrapping)) else { return }
      _ = add(seconds, .progress(Self.artiReady))
    case .ctor:
      let phases = BootstrapPhase.direct
      for (index, phase) in phases.enumerated() {
        let time = seconds * Double(index) / Double(phases.count - 1)
        guard add(time, .progress(phase)) else { return }
      }
      _ = add(seconds, .networkUp)
    }
  }

  private func addStall(
    tag: String, failure: BootstrapPlan.StallFailure,
    _ add: (Double, BootstrapEvent.Kind) -> Bool
  ) {
    guard personality == .ctor else {
      guard add(0, .progress(Self.artiStarting)) else { return }
      _ = add(Self.stepSeconds, .progress(Self.artiBootstrapping))
      return
    }
    let path = BootstrapSimulator.path(to: tag)
    var time = 0.0
    for (index, phase) in path.enumerated() {
      time = Double(index) * Self.stepSeconds
      guard add(time, .progress(phase)) else { return }
    }
    if path.last == .done {
      _ = add(time, .networkUp)
      return
    }
    guard let stuck = path.last else { return }
    let first: Double
    let interval: Double
    let warning: String
    let reason: String
    switch failure {
    case .none: return
    case .connectRefused:
      first = Self.refusedIntervalSeconds
      interval = Self.refusedIntervalSeconds
      warning = "Connection refused"
      reason = "CONNECTREFUSED"
    case .timeout:
      first = Self.timeoutFirstSeconds
      interval = Self.timeoutIntervalSeconds
      warning = "Connection timed out"
      reason = "TIMEOUT"
    }
    var count = 1
    while true {
      let relay = relays[(count - 1) % relays.count]
      let report = BootstrapWarning(
        phase: stuck, warning: warning, reason: reason, count: count,
        recommendation: count >= Self.problemThreshold ? "warn" : "ignore",
        hostID: relay.fingerprint, hostAddress: relay.address)
      guard add(time + first + Double(count - 1) * interval, .warning(report)) else { return }
      count += 1
    }
  }

  private func addRecovery(
    from tag: String, at until: Double, _ add: (Double, BootstrapEvent.Kind) -> Bool
  ) {
    guard personality == .ctor else {
      _ = add(until, .progress(Self.artiReady))
      return
    }
    let stuck = BootstrapPhase.named(tag)?.progress ?? 0
    var time = until
    for phase in BootstrapPhase.direct where phase.progress > stuck {
      guard add(time, .progress(phase)) else { return }
      if phase == .done {
        _ = add(time, .networkUp)
        return
      }
      time += Self.stepSeconds
    }
  }

  /// The phases tor reports on its way to `tag`: the direct ones, plus the pluggable-transport
  /// or proxy rows when `tag` is one of those.
  static func path(to tag: String) -> [BootstrapPhase] {
    guard let target = BootstrapPhase.named(tag) else { return [.starting] }
    let family: String? =
      tag.hasSuffix("_pt") ? "_pt" : tag.hasSuffix("_proxy") ? "_proxy" : nil
    return BootstrapPhase.all.filter { phase in
      guard phase.progress <= target.progress else { return false }
      if let family, phase.tag.hasSuffix(family) { return true }
      return BootstrapPhase.direct.contains(phase)
    }
  }
}
