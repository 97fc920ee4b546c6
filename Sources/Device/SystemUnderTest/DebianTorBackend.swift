import FailClosedSupport
import Foundation
import OnionBrowserModel
import TorControl

/// Debian's tor as the app's Tor client, started by the app in whatever namespace the app runs
/// in (the device) and driven through its control port the way Onion Browser drives it
/// (``ControlPortTorBackend``, cookie authentication). arti_start writes `<state-dir>/tor/torrc`
/// (the base's network settings, then the app's own: data directory, loopback SOCKS and control
/// ports, logs, owning controller, network disabled until the controller enables it, and the
/// bridges when the profile uses them), spawns tor and, once its control port and cookie are
/// there, hands it to the controller. arti_stop stops the controller, then tor (SIGTERM, SIGKILL
/// after 1 s) and reaps it. A malformed bridge setting under a profile that uses bridges fails
/// closed: tor is not started.
@AppActor public final class DebianTorBackend: TorBackend, OnionBrowserTorControl {
  public let configuration: DebianTorConfiguration
  public let supportsOnionServices = true
  private let profile: SUTProfile
  private let store: KeyValueStore
  private let scheduler: any AppScheduler
  private let log: AppEventLog
  private let current = DebianTorProcessSlot()
  private var controller: ControlPortTorBackend?
  /// Which Onion Browser drives this tor (bitchat's profiles: 1.X's polling client).
  private let onionBrowser: OnionBrowserVersion?
  /// Bumped by every start and stop, so a late "control port ready" of an old tor is dropped.
  private var attempt = 0
  private var summary = ""

  public init(
    configuration: DebianTorConfiguration, profile: SUTProfile, store: KeyValueStore,
    scheduler: any AppScheduler, log: AppEventLog, onionBrowser: OnionBrowserVersion? = nil
  ) {
    self.onionBrowser = onionBrowser
    self.configuration = configuration
    self.profile = profile
    self.store = store
    self.scheduler = scheduler
    self.log = log
  }

  /// The PID of the running tor, if any.
  public nonisolated var torPID: Int32? { current.process.flatMap { $0.isRunning ? $0.pid : nil } }

  public func start(dataDirectory: String, socksPort: UInt16) -> Int32 {
    if current.process?.isRunning == true || controller?.isRunning() == true { return -1 }
    guard let bridges = bridgesForThisStart() else { return -3 }
    let configuration = self.configuration
    let torrc = ClientTorrc.app(
      base: configuration.baseTorrc, dataDirectory: configuration.dataDirectory,
      logDirectory: configuration.directory, socksPort: configuration.socksPort,
      controlPort: configuration.controlPort, owningControllerPID: getpid(), bridges: bridges)
    let process: DebianTorProcess
    do {
      let files = FileManager.default
      try files.createDirectory(
        atPath: configuration.dataDirectory, withIntermediateDirectories: true)
      chmod(configuration.dataDirectory, 0o700)
      try torrc.write(toFile: configuration.torrcPath, atomically: true, encoding: .utf8)
      // A cookie left by an earlier tor would pass for this one's.
      try? files.removeItem(atPath: configuration.cookiePath)
      let log = self.log
      process = try DebianTorProcess(
        [
          configuration.torBinary, "-f", configuration.torrcPath, "--defaults-torrc", "/dev/null",
          "--hush",
        ], outputPath: configuration.outputPath
      ) { status in
        log.record(
          .tor,
          [
            "phase": "process", "detail": .string("exited status \(status)"),
            "summary": .string(status > 128 ? "killed by signal \(status - 128)" : "exited"),
          ])
      }
    } catch {
      summary = "Error: \(error)"
      log.record(.error, ["message": .string("tor backend: cannot start tor: \(error)")])
      return -3
    }
    current.process = process
    log.record(
      .tor,
      [
        "phase": "process",
        "detail": .string(
          "started pid \(process.pid) in "
            + (NetworkConfinement.harnessNamespace().map { "namespace \($0)" }
              ?? "the host's namespace (loopback only)")),
        "command": .string(configuration.torBinary + " -f " + configuration.torrcPath),
      ])
    summary = "Starting tor..."
    attempt += 1
    let mine = attempt
    let bridged = !bridges.isEmpty
    BlockingIO.detach("failclosed.tor-control-wait") {
      let problem = DebianTorBackend.waitForControl(process, configuration: configuration)
      Task { @AppActor in self.controlPortWaited(attempt: mine, problem: problem, bridged: bridged)
      }
    }
    return 0
  }

  /// The bridges this start uses, nil when it must not start (the setting is malformed, or
  /// names an address tor may not reach from here). Logs what was decided.
  private func bridgesForThisStart() -> [BridgeLine]? {
    switch TorBridgeSettings.decide(store: store, profile: profile) {
    case .none:
      log.record(.state, ["component": "tor", "field": "bridges", "value": "none"])
      return []
    case .ignored(let count):
      log.record(
        .state,
        [
          "component": "tor", "field": "bridges", "value": "ignored", "count": .int(count),
          "detail": .string("profile \(profile.name) has no bridge support; tor starts without"),
        ])
      return []
    case .use(let bridges):
      if configuration.confinedToLoopback,
        let outside = bridges.first(where: {
          SocketAddress("\($0.host):\($0.port)")?.isLoopback != true
        })
      {
        return refuse(
          "\(TorBridgeSettings.storeKey): bridge \(outside.host):\(outside.port) is not on "
            + "loopback, and this process runs in the host's network namespace")
      }
      log.record(
        .state,
        ["component": "tor", "field": "bridges", "value": "used", "count": .int(bridges.count)])
      return bridges
    case .invalid(let error):
      return refuse(error.description)
    }
  }

  private func refuse(_ reason: String) -> [BridgeLine]? {
    log.record(.state, ["component": "tor", "field": "bridges", "value": "invalid"])
    log.record(
      .error,
      [
        "message": .string(
          "\(reason); tor not started (fail closed: never without the configured bridges)")
      ])
    summary = "Error: \(reason)"
    return nil
  }

  /// Waits (real time, bounded) until tor has written its cookie and accepts on its control
  /// port. Returns what went wrong, nil when ready.
  nonisolated static func waitForControl(
    _ process: DebianTorProcess, configuration: DebianTorConfiguration,
    clock: any HarnessClock = SystemClock()
  ) -> String? {
    let start = clock.now
    while clock.now - start < configuration.controlWaitSeconds {
      if let status = process.exitStatus {
        return "tor exited with status \(status) before its control port opened: "
          + lastLines(configuration.outputPath)
      }
      let cookie = FileManager.default.contents(atPath: configuration.cookiePath)
      if cookie?.count == 32,
        let socket = try? Socket.connect(to: configuration.control, timeout: 1)
      {
        socket.close()
        return nil
      }
      clock.sleepBlocking(seconds: 0.05)
    }
    return "tor's control port \(configuration.control) and cookie were not ready after "
      + "\(Int(configuration.controlWaitSeconds)) s"
  }

  nonisolated static func lastLines(_ path: String) -> String {
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    return text.split(separator: "\n").suffix(3).joined(separator: " | ")
  }

  private func controlPortWaited(attempt mine: Int, problem: String?, bridged: Bool) {
    guard mine == attempt, let process = current.process else { return }
    if let problem {
      summary = "Error: \(problem)"
      log.record(.error, ["message": .string("tor backend: \(problem)")])
      BlockingIO.detach("failclosed.tor-stop") { process.terminate() }
      return
    }
    // The harness's steps for its tor (OnionBrowserHarnessDeviation): the network enabled
    // after authenticating, and TAKEOWNERSHIP for 2.X/3.X (tor dies with the app there);
    // 1.X reopens its connection and relies on __OwningControllerProcess instead.
    let version = onionBrowser ?? .v1
    let controller = ControlPortTorBackend(
      control: configuration.control, authentication: .cookieFile(configuration.cookiePath),
      scheduler: scheduler, log: log, version: version, bridgesConfigured: bridged,
      deviation: OnionBrowserHarnessDeviation(takeOwnership: version != .v1))
    self.controller = controller
    _ = controller.start(
      dataDirectory: configuration.dataDirectory, socksPort: configuration.socksPort)
  }

  public func stop(done: @escaping @AppActor () -> Void) {
    attempt += 1
    summary = ""
    // Still running (isRunning true) until reaped, so a restart waits for it: the next tor
    // needs the same data directory and ports.
    let process = current.process
    let slot = current
    let finish: @AppActor () -> Void = {
      BlockingIO.detach("failclosed.tor-stop") {
        process?.terminate()
        slot.clear(ifStill: process)
        Task { @AppActor in done() }
      }
    }
    if let controller {
      self.controller = nil
      controller.stop(done: finish)
    } else {
      finish()
    }
  }

  public func isRunning() -> Bool {
    current.process?.isRunning == true || controller?.isRunning() == true
  }

  /// Whether tor's control port is up and the controller drives it.
  var isControlled: Bool { controller != nil }

  public func bootstrapProgress() -> Int { controller?.bootstrapProgress() ?? 0 }

  public func bootstrapSummary() -> String { controller?.bootstrapSummary() ?? summary }

  /// A network change, through the controller (its version's reaction).
  public func networkChanged() { controller?.networkChanged() }
  public func networkChanged(reachable: Bool) { controller?.networkChanged(reachable: reachable) }
  public func appDidEnterBackground() { controller?.appDidEnterBackground() }
  public func appDidBecomeActive() { controller?.appDidBecomeActive() }
  public var browserState: OnionBrowserTorState {
    controller?.browserState
      ?? OnionBrowserTorState(gaveUp: summary.hasPrefix("Error") ? summary : nil)
  }

  /// Kills the running tor now (SIGTERM, SIGKILL after 1 s) and reaps it, from any thread:
  /// the app's exit paths (the end of the actions, an error, SIGINT or SIGTERM). Blocking.
  public nonisolated func terminateForExit() {
    current.take()?.terminate()
  }
}

/// The backend's current tor, readable from any thread (the exit paths).
final class DebianTorProcessSlot: @unchecked Sendable {
  private let lock = NSLock()
  private var stored: DebianTorProcess?

  var process: DebianTorProcess? {
    get { lock.withLock { stored } }
    set { lock.withLock { stored = newValue } }
  }

  func clear(ifStill process: DebianTorProcess?) {
    lock.withLock { if stored === process { stored = nil } }
  }

  func take() -> DebianTorProcess? {
    lock.withLock {
      defer { stored = nil }
      return stored
    }
  }
}
