import FailClosedSupport
import Foundation

/// bitchat's TorManager (localPackages/Arti/Sources/TorManager.swift), rule for rule: readiness
/// is a reachable SOCKS port and bootstrap progress 100; a start runs a 60 s SOCKS probe (1 s
/// connect timeout, 250 ms pause) next to a 75 s bootstrap poll (every 1 s) that reports a stall
/// once; a generation counter fences stale poll loops; background marks not-ready without
/// stopping Tor, foreground restarts it; path changes restart it behind 3 s and 15 s guards.
/// All time comes from the injected scheduler.
@AppActor public final class TorManager {
  /// Why a start failed, as bitchat's NSError(domain: "TorManager", code:, description).
  public struct Failure: Error, Equatable, Sendable, CustomStringConvertible {
    public let code: Int
    public let message: String
    public var description: String { "TorManager \(code): \(message)" }
  }

  public nonisolated let socksHost: String
  public nonisolated let socksPort: UInt16
  public nonisolated let dataDirectory: String

  // Published state, each change logged as a `state` event.
  public private(set) var isReady = false {
    didSet { if isReady != oldValue { log.state("tor", "isReady", .bool(isReady)) } }
  }
  public private(set) var isStarting = false {
    didSet { if isStarting != oldValue { log.state("tor", "isStarting", .bool(isStarting)) } }
  }
  public private(set) var lastError: Failure? {
    didSet {
      if lastError != oldValue {
        log.state("tor", "lastError", .string(lastError.map { "\($0.code) \($0.message)" } ?? ""))
      }
    }
  }
  public private(set) var bootstrapProgress = 0 {
    didSet {
      if bootstrapProgress != oldValue {
        log.state("tor", "bootstrapProgress", .int(bootstrapProgress))
      }
    }
  }
  public private(set) var bootstrapSummary = "" {
    didSet {
      if bootstrapSummary != oldValue {
        log.state("tor", "bootstrapSummary", .string(bootstrapSummary))
      }
    }
  }
  public private(set) var bootstrapDidStall = false {
    didSet {
      if bootstrapDidStall != oldValue {
        log.state("tor", "bootstrapDidStall", .bool(bootstrapDidStall))
      }
    }
  }

  private var socksReady = false {
    didSet {
      if socksReady != oldValue { log.state("tor", "socksReady", .bool(socksReady)) }
      recomputeReady()
    }
  }
  private var restarting = false
  private var didStart = false
  private var shutdownsInFlight = 0
  private var startPendingAfterShutdown = false
  private var bootstrapMonitorStarted = false
  /// Bumped by shutdown, dormancy and restart so a poll loop of an older attempt stops.
  public private(set) var bootstrapGeneration = 0
  private var pathMonitorStarted = false
  private var isAppForeground = true
  private var lastRestartAt: Double?
  private var startedAt: Double?
  public private(set) var allowAutoStart = false

  private let backend: any TorBackend
  private let probe: any SocksProbe
  private let scheduler: any AppScheduler
  private let bus: NotificationBus
  private let log: AppEventLog
  public nonisolated let profile: SUTProfile

  public init(
    backend: any TorBackend, probe: any SocksProbe, scheduler: any AppScheduler,
    bus: NotificationBus, log: AppEventLog, profile: SUTProfile = .bitchat,
    dataDirectory: String = "AppSupport/bitchat/arti", socksHost: String = "127.0.0.1",
    socksPort: UInt16 = 39050
  ) {
    self.backend = backend
    self.probe = probe
    self.scheduler = scheduler
    self.bus = bus
    self.log = log
    self.profile = profile
    self.dataDirectory = dataDirectory
    self.socksHost = socksHost
    self.socksPort = socksPort
  }

  /// bitchat enforces Tor in every build but a developer's clearnet build (its
  /// BITCHAT_DEV_ALLOW_CLEARNET condition); the model is the release build.
  public nonisolated static let torEnforced = true

  public nonisolated var torEnforced: Bool { Self.torEnforced }

  /// True only when Tor is up, or always with the dev flag.
  public var networkPermitted: Bool { torEnforced ? isReady : true }

  public var supportsOnionServices: Bool { backend.supportsOnionServices }

  // MARK: - Public API

  public func startIfNeeded() {
    // Only when allowed and in the foreground.
    guard allowAutoStart && isAppForeground else { return }
    if shutdownsInFlight > 0 {
      // A start arriving while a shutdown finishes is honoured afterwards.
      startPendingAfterShutdown = true
      return
    }
    if didStart { return }
    didStart = true
    isStarting = true
    bootstrapDidStall = false
    startedAt = scheduler.now
    lastError = nil
    bus.post(.torWillStart)
    ensureFilesystemLayout()
    startArti()
    startPathMonitorIfNeeded()
  }

  public func setAppForeground(_ foreground: Bool) {
    isAppForeground = foreground
    log.state("tor", "isAppForeground", .bool(foreground))
  }

  public func isForeground() -> Bool { isAppForeground }

  /// Starts Tor when in the foreground, then polls networkPermitted every 200 ms until it holds
  /// or `timeout` (75 s, the bootstrap deadline) passes.
  public func awaitReady(timeout: Double = 75.0) async -> Bool {
    await withCheckedContinuation { continuation in
      awaitReady(timeout: timeout) { continuation.resume(returning: $0) }
    }
  }

  /// awaitReady with a completion on the app actor (bitchat's `awaitTorReady { ready in }`).
  public func awaitReady(timeout: Double = 75.0, completion: @escaping @AppActor (Bool) -> Void) {
    if isAppForeground { startIfNeeded() }
    let deadline = scheduler.now + timeout
    if networkPermitted {
      completion(true)
      return
    }
    pollReady(deadline: deadline, completion: completion)
  }

  private func pollReady(deadline: Double, completion: @escaping @AppActor (Bool) -> Void) {
    guard scheduler.now < deadline else {
      completion(networkPermitted)
      return
    }
    scheduler.schedule(after: 0.2) {
      if self.networkPermitted {
        completion(true)
      } else {
        self.pollReady(deadline: deadline, completion: completion)
      }
    }
  }

  public func setAutoStartAllowed(_ allow: Bool) {
    allowAutoStart = allow
    log.state("tor", "allowAutoStart", .bool(allow))
  }

  public func isAutoStartAllowed() -> Bool { allowAutoStart }

  // MARK: - Filesystem

  private func ensureFilesystemLayout() {
    // Non-fatal, as in bitchat: Arti reports a bad directory itself.
    guard let directory = dataDirectoryIfAvailable() else { return }
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
  }

  /// bitchat's dataDirectoryURL(): Application Support (here the data directory's parent),
  /// created if missing, plus the Arti directory; nil when the base cannot be had.
  private func dataDirectoryIfAvailable() -> String? {
    let base = (dataDirectory as NSString).deletingLastPathComponent
    var isDirectory: ObjCBool = false
    if !base.isEmpty, !FileManager.default.fileExists(atPath: base, isDirectory: &isDirectory) {
      guard
        (try? FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true))
          != nil
      else { return nil }
      return dataDirectory
    }
    return base.isEmpty || isDirectory.boolValue ? dataDirectory : nil
  }

  // MARK: - Arti

  private func startArti() {
    guard let directory = dataDirectoryIfAvailable() else {
      isStarting = false
      lastError = Failure(code: -1, message: "No data directory")
      return
    }
    if backend.isRunning() {
      // Already running: monitor bootstrap, but no SOCKS probe (as in bitchat).
      startBootstrapMonitor()
      return
    }
    let result = backend.start(dataDirectory: directory, socksPort: socksPort)
    if result != 0 {
      isStarting = false
      lastError = Failure(code: Int(result), message: "Arti start failed")
      return
    }
    startBootstrapMonitor()
    // The probe is not fenced by the generation (as in bitchat): it always reports.
    waitForSocksReady(deadline: scheduler.now + profile.socksProbeTimeout) { ready in
      self.socksReady = ready
      if !ready { self.lastError = Failure(code: -14, message: "SOCKS not reachable") }
    }
  }

  /// Up to `timeout`: connect with a 1 s timeout, pause 250 ms, again. A try that fails ends
  /// on its 1 s timer, not at the refusal: against a closed loopback port Apple's NWConnection
  /// reports `.waiting`, which probeSocksOnce ignores (it resumes only on `.ready`, `.failed`,
  /// `.cancelled` or its 1 s asyncAfter; TorManager.swift, probeSocksOnce), so each failed try
  /// takes about 1.25 s, not 0.25 s.
  private func waitForSocksReady(
    deadline: Double, completion: @escaping @AppActor (Bool) -> Void
  ) {
    guard scheduler.now < deadline else {
      completion(false)
      return
    }
    let tryStarted = scheduler.now
    probe.probeOnce(host: socksHost, port: socksPort, timeout: Self.socksProbeTryTimeout) {
      reachable in
      if reachable {
        completion(true)
        return
      }
      let timerLeft = max(0, Self.socksProbeTryTimeout - (self.scheduler.now - tryStarted))
      self.scheduler.schedule(after: timerLeft + Self.socksProbePause) {
        self.waitForSocksReady(deadline: deadline, completion: completion)
      }
    }
  }

  /// probeSocksOnce's own timer, and waitForSocksReady's pause between tries.
  nonisolated static let socksProbeTryTimeout = 1.0
  nonisolated static let socksProbePause = 0.25

  // MARK: - Bootstrap monitoring

  private func startBootstrapMonitor() {
    if bootstrapMonitorStarted { return }
    bootstrapMonitorStarted = true
    // A new generation: loops of an earlier start see theirs is stale and end.
    let generation = bootstrapGeneration + 1
    bootstrapGeneration = generation
    let deadline = scheduler.now + 75
    // bitchat starts the loop in a detached task: its first read is not synchronous.
    scheduler.schedule(after: 0) { self.bootstrapPoll(generation: generation, deadline: deadline) }
  }

  /// One turn of bitchat's `while now < deadline { read; if done break; sleep 1 }` loop.
  private func bootstrapPoll(generation: Int, deadline: Double) {
    guard scheduler.now < deadline else {
      // A deliberate shutdown or restart mid-bootstrap is not a stall.
      guard generation == bootstrapGeneration else { return }
      isStarting = false
      bootstrapDidStall = true
      bus.post(.torBootstrapDidStall)
      return
    }
    guard generation == bootstrapGeneration else { return }
    let progress = backend.bootstrapProgress()
    let summary = backend.bootstrapSummary().truncatedToSummaryBuffer()
    bootstrapProgress = progress
    bootstrapSummary = summary
    if progress >= 100 { isStarting = false }
    recomputeReady()
    if progress >= 100 { return }
    scheduler.schedule(after: 1.0) {
      self.bootstrapPoll(generation: generation, deadline: deadline)
    }
  }

  // MARK: - Foreground / background

  public func ensureRunningOnForeground() {
    if !allowAutoStart { return }
    // bitchat claims the restart from a detached task, one hop later.
    scheduler.schedule(after: 0) {
      if self.isStarting || self.restarting { return }
      self.restarting = true
      if self.isReady {
        self.restarting = false
        return
      }
      // Arti has no real dormant mode: always a full restart.
      self.restartArti { self.restarting = false }
    }
  }

  public func goDormantOnBackground() {
    // Marks not-ready; Arti keeps running (bitchat does this in a Task on the main actor).
    scheduler.schedule(after: 0) {
      self.bootstrapGeneration += 1
      self.isStarting = false
      self.socksReady = false
      self.isReady = false
    }
  }

  public func shutdownCompletely() {
    startPendingAfterShutdown = false
    bootstrapGeneration += 1
    shutdownsInFlight += 1
    backend.stop {
      self.waitWhileRunning(remaining: 50) { self.finishShutdown() }
    }
  }

  /// bitchat's `while arti_is_running() != 0 && waited < N { sleep 100 ms }`.
  private func waitWhileRunning(remaining: Int, then done: @escaping @AppActor () -> Void) {
    guard backend.isRunning(), remaining > 0 else {
      done()
      return
    }
    scheduler.schedule(after: 0.1) {
      self.waitWhileRunning(remaining: remaining - 1, then: done)
    }
  }

  private func finishShutdown() {
    isReady = false
    socksReady = false
    bootstrapProgress = 0
    bootstrapSummary = ""
    isStarting = false
    didStart = false
    restarting = false
    bootstrapMonitorStarted = false
    shutdownsInFlight -= 1
    if shutdownsInFlight == 0 && startPendingAfterShutdown {
      startPendingAfterShutdown = false
      startIfNeeded()
    }
  }

  private func restartArti(then done: @escaping @AppActor () -> Void) {
    bus.post(.torWillRestart)
    bootstrapGeneration += 1
    isReady = false
    socksReady = false
    bootstrapProgress = 0
    bootstrapSummary = ""
    isStarting = true
    bootstrapDidStall = false
    lastRestartAt = scheduler.now
    backend.stop {
      self.waitWhileRunning(remaining: 40) {
        self.bootstrapMonitorStarted = false
        self.didStart = false
        self.startIfNeeded()
        done()
      }
    }
  }

  private func recomputeReady() {
    let ready = socksReady && bootstrapProgress >= 100
    if ready != isReady {
      isReady = ready
      if ready { bus.post(.torDidBecomeReady) }
    }
  }

  // MARK: - Path changes

  private func startPathMonitorIfNeeded() {
    // NWPathMonitor, started once and never stopped.
    pathMonitorStarted = true
  }

  /// An NWPathMonitor update. Ignored until the first start (the monitor does not exist yet).
  public func pathDidChange() {
    guard pathMonitorStarted, isAppForeground else { return }
    pokeTorOnPathChange()
  }

  private func pokeTorOnPathChange() {
    if let last = lastRestartAt, scheduler.now - last < 3.0 {
      log.state("tor", "pathChangeSkipped", "recent restart")
      return
    }
    if let started = startedAt, scheduler.now - started < 15.0 {
      log.state("tor", "pathChangeSkipped", "startup grace period")
      return
    }
    if isStarting || restarting {
      log.state("tor", "pathChangeSkipped", "starting")
      return
    }
    if isReady { return }
    ensureRunningOnForeground()
  }
}
