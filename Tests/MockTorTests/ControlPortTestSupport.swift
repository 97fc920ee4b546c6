import FailClosedSupport
import Foundation
import TorControl

@testable import MockTor

/// A blocking control-port client for tests: raw exchanges (for byte comparisons) and parsed
/// replies, every read bounded by a socket timeout.
final class ControlTestClient {
  let socket: Socket
  private var parser = ControlReplyParser()
  private(set) var raw: [UInt8] = []

  init(port: UInt16, timeout: Double = 5) throws {
    socket = try Socket.connect(to: SocketAddress("127.0.0.1:\(port)")!, timeout: timeout)
    socket.setTimeouts(seconds: timeout)
  }

  deinit { socket.close() }

  func send(_ text: String) throws { try socket.write(Array(text.utf8)) }

  /// The next message (reply or event), or nil when the server closed first.
  func next() throws -> ControlMessage? {
    for _ in 0..<10_000 {
      if let message = try parser.next() { return message }
      let bytes = try socket.read()
      if bytes.isEmpty { return nil }
      raw += bytes
      parser.append(bytes)
    }
    return nil
  }

  /// Sends a command and returns its reply, skipping async events (collected in `events`).
  func command(_ line: String, events: inout [ControlMessage]) throws -> ControlMessage? {
    try send(line)
    while let message = try next() {
      if message.isAsyncEvent {
        events.append(message)
        continue
      }
      return message
    }
    return nil
  }

  /// Sends `line` and reads raw bytes until the server closes (for non-control replies).
  func exchangeUntilClose(_ line: String) throws -> (reply: String, closed: Bool) {
    try send(line)
    var bytes: [UInt8] = []
    for _ in 0..<1000 {
      guard let more = try? socket.read() else {
        return (String(decoding: bytes, as: UTF8.self), false)
      }
      if more.isEmpty { return (String(decoding: bytes, as: UTF8.self), true) }
      bytes += more
    }
    return (String(decoding: bytes, as: UTF8.self), false)
  }

  /// Sends `line`, returns the reply's exact bytes and whether the server closed afterwards
  /// (waiting at most `closeWait` real seconds for the close).
  func exchange(_ line: String, closeWait: Double = 1) throws -> (reply: String, closed: Bool) {
    let start = raw.count
    try send(line)
    let message = try next()
    let reply = String(decoding: raw[start...], as: UTF8.self)
    guard message != nil else { return (reply, true) }
    socket.setTimeouts(seconds: closeWait)
    defer { socket.setTimeouts(seconds: 5) }
    do {
      let more = try socket.read()
      return (reply + String(decoding: more, as: UTF8.self), more.isEmpty)
    } catch {
      return (reply, false)
    }
  }
}

/// Runs a child process with a deadline; kills it (SIGKILL) if it overruns.
func runProcess(_ path: String, _ arguments: [String], deadline: Double) throws -> (
  status: Int32, stdout: String, stderr: String
) {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: path)
  process.arguments = arguments
  let out = Pipe()
  let err = Pipe()
  process.standardOutput = out
  process.standardError = err
  try process.run()
  let done = DispatchSemaphore(value: 0)
  let collected = CollectedOutput()
  DispatchQueue.global().async {
    collected.set(
      out: out.fileHandleForReading.readDataToEndOfFile(),
      err: err.fileHandleForReading.readDataToEndOfFile())
    done.signal()
  }
  if done.wait(timeout: .now() + deadline) == .timedOut {
    kill(process.processIdentifier, SIGKILL)
    _ = done.wait(timeout: .now() + 5)
  }
  process.waitUntilExit()
  let (stdout, stderr) = collected.get()
  return (process.terminationStatus, stdout, stderr)
}

private final class CollectedOutput: @unchecked Sendable {
  private let lock = NSLock()
  private var out = Data()
  private var err = Data()

  func set(out: Data, err: Data) {
    lock.withLock {
      self.out = out
      self.err = err
    }
  }

  func get() -> (String, String) {
    lock.withLock { (String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self)) }
  }
}

/// Records what the driver reports to the mock, for assertions.
final class DriverRecorder: @unchecked Sendable {
  private let lock = NSLock()
  private var commandList: [String] = []
  private var signalList: [String] = []
  private var networkList: [Bool] = []

  var hooks: BootstrapDriver.Hooks {
    BootstrapDriver.Hooks(
      command: { record, _ in
        self.lock.withLock { self.commandList.append("\(record.keyword) \(record.arguments)") }
      },
      signal: { name in self.lock.withLock { self.signalList.append(name) } },
      disableNetwork: { disabled in self.lock.withLock { self.networkList.append(disabled) } })
  }

  var commands: [String] { lock.withLock { commandList } }
  var signals: [String] { lock.withLock { signalList } }
  var network: [Bool] { lock.withLock { networkList } }
}
