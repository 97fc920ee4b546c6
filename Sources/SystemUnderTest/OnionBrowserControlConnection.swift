import FailClosedSupport
import Foundation
import TorControl

/// The I/O edge of ``OnionBrowserController``: one control connection to a C tor, run on its
/// own thread (never the cooperative pool). poll(2) waits for tor's bytes or the controller's
/// next deadline, at most 50 ms so requests from other threads (network change, stop) are taken
/// promptly. Every report goes to the app's event log as a `tor` event; the latest bootstrap
/// phase is kept for ``ControlPortTorBackend``.
final class OnionBrowserControlConnection: @unchecked Sendable {
  struct Snapshot: Equatable {
    var progress = 0
    var tag = ""
    var summary = ""
  }

  struct Settings: Sendable {
    var address: SocketAddress
    var authentication: ControlPortTorBackend.Authentication
    var bridgesConfigured: Bool
    var takeOwnership: Bool
    var timings = OnionBrowserTimings()
  }

  /// The longest poll(2) wait, so requests from other threads wait at most this long.
  static let maximumWait = 0.05
  /// How long ``stop()`` waits for the thread to send its last command and close.
  static let stopWait = 2.0

  private let settings: Settings
  /// Real time: tor's timers run at tor's speed, whatever the app's clock does.
  private let clock: any HarnessClock
  private let log: AppEventLog?
  private let lock = NSLock()
  private var snapshot = Snapshot()
  private var running = false
  private var generation = 0
  private var networkChanges = 0
  private var finished: DispatchSemaphore?

  init(settings: Settings, clock: any HarnessClock, log: AppEventLog?) {
    self.settings = settings
    self.clock = clock
    self.log = log
  }

  var state: Snapshot { lock.withLock { snapshot } }
  var isRunning: Bool { lock.withLock { running } }

  /// Starts the control thread; false when already running.
  func start() -> Bool {
    let started: (Int, DispatchSemaphore)? = lock.withLock {
      if running { return nil }
      running = true
      generation += 1
      networkChanges = 0
      snapshot = Snapshot(progress: 0, tag: "", summary: "Starting...")
      let done = DispatchSemaphore(value: 0)
      finished = done
      return (generation, done)
    }
    guard let (mine, done) = started else { return false }
    BlockingIO.ignoreSIGPIPE()
    BlockingIO.detach("failclosed.control") { [self] in
      run(generation: mine)
      done.signal()
    }
    return true
  }

  /// Asks the thread to send SETCONF DisableNetwork=1 and close, and waits for it (bounded).
  func stop() {
    let done: DispatchSemaphore? = lock.withLock {
      running = false
      generation += 1
      defer { finished = nil }
      return finished
    }
    _ = done?.wait(timeout: .now() + Self.stopWait)
    lock.withLock { snapshot = Snapshot() }
  }

  /// SIGNAL RELOAD and NEWNYM on the thread's next turn.
  func networkChanged() {
    lock.withLock { if running { networkChanges += 1 } }
  }

  private func alive(_ mine: Int) -> Bool { lock.withLock { running && generation == mine } }

  private func takeNetworkChanges() -> Int {
    lock.withLock {
      defer { networkChanges = 0 }
      return networkChanges
    }
  }

  // MARK: - The thread

  private func run(generation mine: Int) {
    let socket: Socket
    do {
      socket = try Socket.connect(to: settings.address, timeout: 5)
    } catch {
      fail(mine, "control port \(settings.address): \(error)")
      return
    }
    defer { socket.close() }
    guard alive(mine) else { return }
    socket.setTimeouts(seconds: 5)
    let authenticate: String
    do { authenticate = try authenticateLine() } catch {
      fail(mine, "\(error)")
      return
    }
    var core = OnionBrowserController(
      configuration: .init(
        authenticate: authenticate, takeOwnership: settings.takeOwnership,
        bridgesConfigured: settings.bridgesConfigured, timings: settings.timings))
    var buffer = [UInt8](repeating: 0, count: 16384)
    var output = core.start(at: clock.now)
    while true {
      if let failure = deliver(output, on: socket, generation: mine) {
        _ = deliver(
          core.connectionClosed(reason: failure, at: clock.now), on: socket, generation: mine)
        return
      }
      if output.close { return }
      guard alive(mine) else {
        _ = deliver(core.stop(at: clock.now), on: socket, generation: mine)
        return
      }
      output = OnionBrowserOutput()
      for _ in 0..<takeNetworkChanges() {
        merge(core.networkChanged(at: clock.now), into: &output)
      }
      if !output.lines.isEmpty { continue }
      let wait = min(Self.maximumWait, max(0, (core.nextDeadline ?? .infinity) - clock.now))
      var descriptor = pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)
      let ready = poll(&descriptor, 1, Int32((wait * 1000).rounded(.up)))
      if ready > 0 {
        let count = buffer.withUnsafeMutableBytes {
          recv(socket.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
        }
        if count == 0 {
          output = core.connectionClosed(reason: "closed by tor", at: clock.now)
          continue
        }
        if count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
          output = core.connectionClosed(reason: SystemError("recv").description, at: clock.now)
          continue
        }
        if count > 0 {
          output = core.receive(buffer[0..<count], at: clock.now)
          continue
        }
      }
      output = core.tick(at: clock.now)
    }
  }

  private func merge(_ more: OnionBrowserOutput, into output: inout OnionBrowserOutput) {
    output.lines += more.lines
    output.reports += more.reports
    output.close = output.close || more.close
  }

  /// Writes the lines and records the reports; returns why writing failed, if it did.
  private func deliver(_ output: OnionBrowserOutput, on socket: Socket, generation mine: Int)
    -> String?
  {
    var failure: String?
    // The last check before the wire: nothing that could unpin tor leaves this process.
    if let refused = output.lines.lazy.compactMap(ControlCommandGuard.refusal(for:)).first {
      failure = "refused to send: \(refused)"
    } else if !output.lines.isEmpty {
      do { try socket.write(output.bytes) } catch { failure = "write: \(error)" }
    }
    for report in output.reports { record(report, generation: mine) }
    return failure
  }

  private func record(_ report: OnionBrowserReport, generation mine: Int) {
    lock.withLock {
      // A stopped or replaced connection still logs its last words but no longer sets state.
      guard running && generation == mine else { return }
      switch report {
      case .bootstrap(let phase):
        snapshot = Snapshot(progress: phase.progress, tag: phase.tag, summary: phase.summary)
      case .closed(let reason):
        snapshot.summary = "Error: control connection \(reason)"
      default: break
      }
    }
    if let fields = report.eventFields { log?.record(.tor, fields) }
  }

  private func fail(_ mine: Int, _ message: String) {
    let current = lock.withLock {
      guard running && generation == mine else { return false }
      snapshot.summary = "Error: \(message)"
      return true
    }
    if current { log?.record(.tor, ["phase": "process", "detail": .string(message)]) }
  }

  private func authenticateLine() throws -> String {
    switch settings.authentication {
    case .none: return "AUTHENTICATE"
    case .password(let secret): return "AUTHENTICATE " + ControlArguments.quote(secret)
    case .cookieFile(let path):
      guard let data = FileManager.default.contents(atPath: path) else {
        throw ControlClientError("cookie file \(path): unreadable")
      }
      return "AUTHENTICATE " + ControlArguments.encodeHex(Array(data))
    }
  }
}

struct ControlClientError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
