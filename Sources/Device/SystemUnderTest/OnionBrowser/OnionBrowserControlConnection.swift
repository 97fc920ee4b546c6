import FailClosedSupport
import Foundation
import OnionBrowserModel
import TorControl

/// The I/O edge of ``OnionBrowserController``: the control connection(s) to a C tor, run on
/// one thread of its own (never the cooperative pool). The controller says when to open a
/// connection (1.X reopens its own after a HUP, on background and foreground), what to write
/// and when to close; poll(2) waits for tor's bytes or the controller's next deadline, at most
/// 50 ms so requests from other threads (network change, background, stop) are taken promptly.
/// Every report goes to the app's event log as a `tor` event; the latest state is kept for
/// ``ControlPortTorBackend``.
final class OnionBrowserControlConnection: @unchecked Sendable {
  struct Snapshot: Equatable {
    var progress = 0
    var tag = ""
    var summary = ""
    /// The version's own "Tor is ready".
    var ready = false
    /// 3.X: the SOCKS listener tor reported.
    var socks: String?
    /// 2.X: the connection guard expired (the app shows its UI).
    var stalled = false
    /// 1.X exited, or 3.X's start failed for good.
    var gaveUp: String?
  }

  struct Settings: Sendable {
    var address: SocketAddress
    var authentication: ControlPortTorBackend.Authentication
    var version: OnionBrowserVersion
    var bridgesConfigured: Bool
    var deviation: OnionBrowserHarnessDeviation
    var timings = OnionBrowserTimings()
    /// bitchat's arti_stop over someone else's tor: `SETCONF DisableNetwork=1` at stop.
    var stopDisablesNetwork = false
  }

  enum Request: Sendable {
    case networkChanged(reachable: Bool)
    case background
    case foreground
  }

  /// The longest poll(2) wait, so requests from other threads wait at most this long.
  static let maximumWait = 0.05
  /// How long ``stop()`` waits for the thread to send its last command and close.
  static let stopWait = 2.0

  private let settings: Settings
  /// The controller's timers: the run's clock (the mock's ctor personality runs on it), real
  /// time with a real tor.
  private let clock: any HarnessClock
  private let log: AppEventLog?
  private let lock = NSLock()
  private var snapshot = Snapshot()
  private var running = false
  private var generation = 0
  private var requests: [Request] = []
  private var finished: DispatchSemaphore?

  init(settings: Settings, clock: any HarnessClock, log: AppEventLog?) {
    self.settings = settings
    self.clock = clock
    self.log = log
  }

  var state: Snapshot { lock.withLock { snapshot } }
  var isRunning: Bool { lock.withLock { running } }

  /// Starts the control thread (the app starts tor); false when already running.
  func start() -> Bool {
    let started: (Int, DispatchSemaphore)? = lock.withLock {
      if running { return nil }
      running = true
      generation += 1
      requests = []
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

  /// Asks the thread to end the app's way (terminate) and waits for it (bounded).
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

  /// Taken on the thread's next turn.
  func request(_ request: Request) {
    lock.withLock { if running { requests.append(request) } }
  }

  private func alive(_ mine: Int) -> Bool { lock.withLock { running && generation == mine } }

  private func takeRequests() -> [Request] {
    lock.withLock {
      defer { requests = [] }
      return requests
    }
  }

  // MARK: - The thread

  private func run(generation mine: Int) {
    let authenticate: String
    do { authenticate = try authenticateLine() } catch {
      fail(mine, "\(error)")
      return
    }
    var core = OnionBrowserController(
      configuration: .init(
        version: settings.version, authenticate: authenticate,
        bridgesConfigured: settings.bridgesConfigured, deviation: settings.deviation,
        timings: settings.timings))
    var socket: Socket?
    defer { socket?.close() }
    var buffer = [UInt8](repeating: 0, count: 16384)
    var output = core.launch(at: clock.now)
    while true {
      // Write, record, then close / connect / exit as the controller says.
      if !output.lines.isEmpty, let open = socket {
        // The last check before the wire: nothing that could unpin tor leaves this process.
        if let refused = output.lines.lazy.compactMap(ControlCommandGuard.refusal(for:)).first {
          record(output.reports, generation: mine)
          open.close()
          socket = nil
          output = core.connectionClosed(reason: "refused to send: \(refused)", at: clock.now)
          continue
        }
        do { try open.write(output.bytes) } catch {
          record(output.reports, generation: mine)
          open.close()
          socket = nil
          output = core.connectionClosed(reason: "write: \(error)", at: clock.now)
          continue
        }
      }
      record(output.reports, generation: mine)
      if output.close {
        socket?.close()
        socket = nil
      }
      if output.exitApp { return }
      if output.connect {
        socket?.close()
        socket = nil
        do {
          let open = try Socket.connect(to: settings.address, timeout: 5)
          open.setTimeouts(seconds: 5)
          socket = open
          output = core.connected(at: clock.now)
        } catch {
          output = core.connectFailed(
            reason: "control port \(settings.address): \(error)", at: clock.now)
        }
        continue
      }
      guard alive(mine) else {
        var last = OnionBrowserOutput()
        if settings.stopDisablesNetwork, socket != nil {
          let line = "SETCONF DisableNetwork=1"
          last.lines.append(line)
          last.reports.append(.command(line))
        }
        last.merge(core.terminate(at: clock.now))
        if !last.lines.isEmpty, let socket,
          !last.lines.contains(where: { ControlCommandGuard.refusal(for: $0) != nil })
        {
          try? socket.write(last.bytes)
        }
        record(last.reports, generation: mine)
        return
      }
      output = OnionBrowserOutput()
      for request in takeRequests() {
        switch request {
        case .networkChanged(let reachable):
          output.merge(core.networkChanged(reachable: reachable, at: clock.now))
        case .background: output.merge(core.background(at: clock.now))
        case .foreground: output.merge(core.foreground(at: clock.now))
        }
      }
      if !output.lines.isEmpty || !output.reports.isEmpty || output.close || output.connect
        || output.exitApp
      {
        continue
      }
      // Real seconds: the kernel counts them (poll(2)).
      let wait = min(
        Self.maximumWait, clock.realSeconds(max(0, (core.nextDeadline ?? .infinity) - clock.now)))
      guard let open = socket else {
        if wait > 0 { SystemClock().sleepBlocking(seconds: wait) }
        output = core.tick(at: clock.now)
        continue
      }
      var descriptor = pollfd(fd: open.fd, events: Int16(POLLIN), revents: 0)
      let ready = poll(&descriptor, 1, Int32((wait * 1000).rounded(.up)))
      if ready > 0 {
        let count = buffer.withUnsafeMutableBytes {
          recv(open.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
        }
        if count == 0 {
          open.close()
          socket = nil
          output = core.connectionClosed(reason: "closed by tor", at: clock.now)
          continue
        }
        if count < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR {
          let reason = SystemError("recv").description
          open.close()
          socket = nil
          output = core.connectionClosed(reason: reason, at: clock.now)
          continue
        }
        if count > 0 {
          output = core.receive(Array(buffer[0..<count]), at: clock.now)
          continue
        }
      }
      output = core.tick(at: clock.now)
    }
  }

  private func record(_ reports: [OnionBrowserReport], generation mine: Int) {
    for report in reports { record(report, generation: mine) }
  }

  private func record(_ report: OnionBrowserReport, generation mine: Int) {
    lock.withLock {
      // A stopped or replaced connection still logs its last words but no longer sets state.
      guard running && generation == mine else { return }
      switch report {
      case .bootstrap(let phase):
        snapshot.progress = phase.progress
        snapshot.tag = phase.tag
        snapshot.summary = phase.summary
      case .ready: snapshot.ready = true
      case .socksListener(let address): snapshot.socks = address
      case .stalled: snapshot.stalled = true
      case .exitApp(let reason), .failed(let reason):
        snapshot.gaveUp = reason
        snapshot.summary = "Error: \(reason)"
      default: break
      }
    }
    if let fields = report.eventFields { log?.record(.tor, fields) }
  }

  private func fail(_ mine: Int, _ message: String) {
    let current = lock.withLock {
      guard running && generation == mine else { return false }
      snapshot.summary = "Error: \(message)"
      snapshot.gaveUp = message
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
