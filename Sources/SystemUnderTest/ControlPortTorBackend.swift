import FailClosedSupport
import Foundation
import TorControl

/// An external C tor driven through its control port (the ctor personality: the mock's control
/// port now, Debian's tor later): AUTHENTICATE (none, password or cookie), SETEVENTS
/// STATUS_CLIENT, SETCONF DisableNetwork=0 to start and =1 to stop, and GETINFO
/// status/bootstrap-phase polled every 500 ms (real time) for PROGRESS and SUMMARY. The
/// control connection runs on its own thread; TorManager reads the latest values.
@AppActor public final class ControlPortTorBackend: TorBackend {
  public enum Authentication: Sendable {
    case none
    case password(String)
    case cookieFile(String)
  }

  private let client: ControlPortClient
  private let scheduler: any AppScheduler
  public let supportsOnionServices = true

  public init(control: SocketAddress, authentication: Authentication, scheduler: any AppScheduler) {
    client = ControlPortClient(address: control, authentication: authentication)
    self.scheduler = scheduler
  }

  public func start(dataDirectory: String, socksPort: UInt16) -> Int32 {
    client.start() ? 0 : -1
  }

  public func stop(done: @escaping @AppActor () -> Void) {
    let client = self.client
    BlockingIO.detach("failclosed.control-stop") {
      client.stop()
      Task { @AppActor in done() }
    }
  }

  public func isRunning() -> Bool { client.isRunning }
  public func bootstrapProgress() -> Int { client.state.progress }
  public func bootstrapSummary() -> String { client.state.summary }
}

/// The blocking side of the control connection.
final class ControlPortClient: @unchecked Sendable {
  struct State {
    var progress = 0
    var summary = ""
    var error: String?
  }

  private let address: SocketAddress
  private let authentication: ControlPortTorBackend.Authentication
  private let lock = NSLock()
  private var current = State()
  private var running = false
  private var socket: Socket?
  private var generation = 0

  init(address: SocketAddress, authentication: ControlPortTorBackend.Authentication) {
    self.address = address
    self.authentication = authentication
  }

  var state: State { lock.withLock { current } }
  var isRunning: Bool { lock.withLock { running } }

  /// Starts the control thread; false when already running.
  func start() -> Bool {
    let mine: Int? = lock.withLock {
      if running { return nil }
      running = true
      current = State(progress: 0, summary: "Starting...")
      generation += 1
      return generation
    }
    guard let mine else { return false }
    BlockingIO.detach("failclosed.control") { [self] in run(generation: mine) }
    return true
  }

  func stop() {
    let socket: Socket? = lock.withLock {
      running = false
      generation += 1
      return self.socket
    }
    if let socket {
      _ = try? socket.write(Array("SETCONF DisableNetwork=1\r\n".utf8))
      socket.close()
    }
    lock.withLock {
      self.socket = nil
      current = State()
    }
  }

  private func alive(_ mine: Int) -> Bool { lock.withLock { running && generation == mine } }

  private func run(generation mine: Int) {
    do {
      let socket = try Socket.connect(to: address, timeout: 5)
      socket.setTimeouts(seconds: 5)
      lock.withLock { self.socket = socket }
      var parser = ControlReplyParser()
      func command(_ line: String) throws -> ControlMessage {
        try socket.write(Array((line + "\r\n").utf8))
        while true {
          if let message = try parser.next() {
            if message.isAsyncEvent {
              absorb(message)
              continue
            }
            guard message.isSuccess else {
              throw ControlClientError("\(line.split(separator: " ").first ?? ""): \(message.code)")
            }
            return message
          }
          let chunk = try socket.read(max: 16384)
          guard !chunk.isEmpty else { throw ControlClientError("control port closed") }
          parser.append(chunk)
        }
      }
      _ = try command(try authenticateLine())
      _ = try command("SETEVENTS STATUS_CLIENT")
      _ = try command("SETCONF DisableNetwork=0")
      while alive(mine) {
        absorb(try command("GETINFO status/bootstrap-phase"))
        usleep(500_000)
      }
    } catch {
      guard alive(mine) else { return }
      lock.withLock { current.summary = "Error: \(error)" }
    }
  }

  private func authenticateLine() throws -> String {
    switch authentication {
    case .none: return "AUTHENTICATE"
    case .password(let secret):
      let escaped = secret.replacingOccurrences(of: "\\", with: "\\\\")
        .replacingOccurrences(of: "\"", with: "\\\"")
      return "AUTHENTICATE \"\(escaped)\""
    case .cookieFile(let path):
      guard let data = FileManager.default.contents(atPath: path) else {
        throw ControlClientError("cookie file \(path) unreadable")
      }
      return "AUTHENTICATE " + data.map { String(format: "%02X", $0) }.joined()
    }
  }

  /// Takes PROGRESS and SUMMARY from a bootstrap-phase reply or a STATUS_CLIENT event.
  private func absorb(_ message: ControlMessage) {
    for line in message.lines {
      guard let phase = Self.bootstrapPhase(line.text) else { continue }
      lock.withLock {
        current.progress = phase.progress
        current.summary = phase.summary
      }
    }
  }

  static func bootstrapPhase(_ text: String) -> (progress: Int, summary: String)? {
    guard text.contains("BOOTSTRAP"), let range = text.range(of: "PROGRESS=") else { return nil }
    let digits = text[range.upperBound...].prefix { $0.isNumber }
    guard let progress = Int(digits) else { return nil }
    var summary = ""
    if let start = text.range(of: "SUMMARY=\"") {
      summary = String(text[start.upperBound...].prefix { $0 != "\"" })
    }
    return (progress, summary)
  }
}

struct ControlClientError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
