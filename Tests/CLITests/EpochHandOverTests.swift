import FailClosedSupport
import Foundation
import TestSupport
import Testing

/// `--epoch stdin`, as the mock lane starts the mock Tor and the app: each says `ready` on its
/// standard input (a socket the test holds) once set up, waits for the epoch however long it
/// takes (the canary: no action before it), takes it, says `started` before it, and acts from
/// it. Without the runner's socket it is a clear error, not a hang.
@Suite(.serialized) struct EpochHandOverTests {
  @Test(
    .needsFailclosedBinary)
  func theAppWaitsForTheEpochAndActsFromIt() throws {
    let binary = try #require(FailclosedBinary.built)
    let directory = try RunClockTests.temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let actions = directory + "/actions.jsonl"
    try #"{"at":0,"action":"start"}"#.appending("\n" + #"{"at":5,"action":"wait","seconds":0}"#)
      .write(toFile: actions, atomically: true, encoding: .utf8)
    let socket = try HandOverSocket()
    let output = Pipe()
    let app = try Self.launch(
      binary,
      [
        "app", "--backend", "simulated", "--actions", actions, "--state-dir",
        directory + "/state", "--time-scale", "25", "--epoch", "stdin",
      ], input: socket.processEnd, output: output)
    defer { RunClockTests.stop(app) }
    socket.closeProcessEnd()
    let origin = MonotonicInstant.now
    let lines = LineReader(
      output.fileHandleForReading, clock: ScaledClock(factor: 1, epoch: origin))
    #expect(try socket.line(timeout: 30) == "ready")
    // The canary: held at ready, the app says nothing more and performs nothing (its start
    // arrives after the epoch, below), however long the runner takes.
    #expect(socket.lineIfAny(timeout: 0.3) == nil)
    let epoch = MonotonicInstant.now.advanced(bySeconds: 0.5)
    try socket.send(epoch.description + "\n")
    let started = try socket.line(timeout: 30)
    let late = try #require(Double(started.dropFirst("started ".count)), "'\(started)'")
    #expect(started.hasPrefix("started ") && late < 0, "'\(started)'")
    let (line, arrived) = try #require(
      lines.waitFor(#""action":"start""#), "the app never started")
    let startedAt = try #require(RunClockTests.jsonNumber(line, key: "t"))
    // Its first action at the run's time 0: not before the epoch, and promptly after it.
    #expect(arrived >= epoch.seconds(since: origin), "start arrived \(arrived) s after launch")
    #expect(startedAt >= -RunClockTests.rounding && startedAt < 25, "start at \(startedAt)")
  }

  @Test(
    .needsFailclosedBinary)
  func theMockSaysReadyThenStartedBeforeTheEpoch() throws {
    let binary = try #require(FailclosedBinary.built)
    let directory = try RunClockTests.temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let port = try freeLoopbackPort()
    let socket = try HandOverSocket()
    let mock = try Self.launch(
      binary,
      [
        "mock-tor", "--personality", "ctor", "--listen", "127.0.0.1:\(port)", "--event-log",
        directory + "/mock.jsonl", "--time-scale", "25", "--epoch", "stdin",
      ], input: socket.processEnd, output: nil)
    defer { RunClockTests.stop(mock) }
    socket.closeProcessEnd()
    #expect(try socket.line(timeout: 30) == "ready")
    let epoch = MonotonicInstant.now.advanced(bySeconds: 0.5)
    try socket.send(epoch.description + "\n")
    let started = try socket.line(timeout: 30)
    let late = try #require(Double(started.dropFirst("started ".count)), "'\(started)'")
    #expect(started.hasPrefix("started ") && late < 0, "'\(started)'")
    // Started means listening: the SOCKS port (ctor listens from the start) takes a connection.
    let connected = try Socket.connect(
      to: try #require(SocketAddress("127.0.0.1:\(port)")), timeout: 5)
    connected.close()
  }

  @Test(
    .needsFailclosedBinary)
  func withoutTheRunnersSocketItIsAClearError() throws {
    let binary = try #require(FailclosedBinary.built)
    let directory = try RunClockTests.temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let actions = directory + "/actions.jsonl"
    try #"{"at":0,"action":"start"}"#.write(toFile: actions, atomically: true, encoding: .utf8)
    let errors = Pipe()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = [
      "app", "--backend", "simulated", "--actions", actions, "--epoch", "stdin",
    ]
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = errors
    try process.run()
    let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus != 0)
    #expect(text.contains("--epoch stdin"), "\(text)")
  }

  static func launch(_ binary: String, _ arguments: [String], input: Int32, output: Pipe?) throws
    -> Process
  {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = arguments
    // Named its parent, so it ends if this test process dies (ParentDeathWatch).
    process.environment = ParentDeathWatch.childEnvironment()
    process.standardInput = FileHandle(fileDescriptor: input, closeOnDealloc: false)
    process.standardOutput = output ?? FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    return process
  }
}

/// The runner's end of a hand-over socket, and the process's end to give as its stdin.
final class HandOverSocket {
  let runnerEnd: Int32
  private(set) var processEnd: Int32
  private var buffer: [UInt8] = []

  init() throws {
    var ends: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0 else {
      throw SystemError("socketpair")
    }
    runnerEnd = ends[0]
    processEnd = ends[1]
  }

  deinit {
    close(runnerEnd)
    closeProcessEnd()
  }

  func closeProcessEnd() {
    if processEnd >= 0 { close(processEnd) }
    processEnd = -1
  }

  func send(_ text: String) throws {
    let bytes = Array(text.utf8)
    guard bytes.withUnsafeBytes({ write(runnerEnd, $0.baseAddress, $0.count) }) == bytes.count
    else { throw SystemError("write") }
  }

  /// The next line, waiting at most `timeout` real seconds.
  func line(timeout: Double) throws -> String {
    guard let line = lineIfAny(timeout: timeout) else {
      throw SystemError("no line within \(timeout) s", code: ETIMEDOUT)
    }
    return line
  }

  func lineIfAny(timeout: Double) -> String? {
    let deadline = MonotonicInstant.now.advanced(bySeconds: timeout)
    while true {
      if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: buffer[..<newline], as: UTF8.self)
        buffer.removeSubrange(...newline)
        return line
      }
      let left = deadline.seconds(since: .now)
      guard left > 0 else { return nil }
      var poller = pollfd(fd: runnerEnd, events: Int16(POLLIN), revents: 0)
      guard poll(&poller, 1, Int32(left * 1000) + 1) > 0 else { continue }
      var chunk = [UInt8](repeating: 0, count: 256)
      let count = read(runnerEnd, &chunk, chunk.count)
      guard count > 0 else { return nil }
      buffer += chunk[..<count]
    }
  }
}
