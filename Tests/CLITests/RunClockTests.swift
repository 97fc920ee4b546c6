import FailClosedSupport
import Foundation
import TestSupport
import Testing

/// The mock Tor and the app, started as the scenario runner starts them (`--time-scale`,
/// `--epoch`), read one clock. Each stamps an event the test causes between two readings of
/// the run's clock (a round trip, as NTP bounds a clock's offset): a stamp from the same clock
/// falls inside the test's window [a, b], and a clock off by more than the window's width falls
/// outside it. The agreement between the two processes is then bounded by the two widths
/// (plus the stamps' rounding), measured here rather than assumed. The canary hands the app an
/// epoch one real second later (25 virtual seconds, the size of the skew two clocks started
/// apart showed under load): its stamp must fall outside.
@Suite(.serialized) struct RunClockTests {
  static let scale = 25.0
  /// Stamps are written with 3 decimals: each may be off by half a millisecond.
  static let rounding = 0.0005

  struct Window {
    let stamp: Double
    let from: Double
    let to: Double
    var width: Double { to - from }
    var contains: Bool {
      stamp >= from - RunClockTests.rounding && stamp <= to + RunClockTests.rounding
    }
  }

  @Test(
    .needsFailclosedBinary)
  func theAppAndTheMockStampTheSameInstantAlike() async throws {
    let binary = try #require(FailclosedBinary.built, "needs the failclosed binary (swift build)")
    let clock = ScaledClock(
      factor: Self.scale, epoch: MonotonicInstant.now.advanced(bySeconds: 0.3))
    // As NTP keeps its shortest round trip: a round trip stretched by load (seen at 50 ms real,
    // 1.25 virtual s, with the CLI tests running side by side) bounds little, so up to five
    // pairs are taken and the tightest of each kept. Every stamp must fall in its own window.
    var mocks: [Window] = []
    var apps: [Window] = []
    for _ in 0..<5 {
      mocks.append(try Self.mockWindow(binary, clock: clock))
      apps.append(try Self.appWindow(binary, clock: clock, epoch: clock.epoch))
      if mocks.map(\.width).min()! + apps.map(\.width).min()! < 0.5 { break }
    }
    for mock in mocks {
      #expect(
        mock.contains, "mock stamped \(mock.stamp), the run's clock read [\(mock.from), \(mock.to)]"
      )
    }
    for app in apps {
      #expect(
        app.contains, "app stamped \(app.stamp), the run's clock read [\(app.from), \(app.to)]")
    }
    let mock = mocks.min { $0.width < $1.width }!
    let app = apps.min { $0.width < $1.width }!
    let bound = mock.width + app.width + 2 * Self.rounding
    // What a reader of the reports may rely on: both stamp an instant within `bound` of each
    // other (virtual seconds). Printed for the record; it is a measurement, not a guess.
    print(
      "run clock: app and mock agree within \(bound) virtual s (windows \(app.width), \(mock.width))"
    )
    #expect(bound < 1, "a round trip took more than a virtual second: the bound proves little")
  }

  @Test(
    .needsFailclosedBinary)
  func anAppOnAnotherEpochIsCaught() async throws {
    let binary = try #require(FailclosedBinary.built, "needs the failclosed binary (swift build)")
    let clock = ScaledClock(
      factor: Self.scale, epoch: MonotonicInstant.now.advanced(bySeconds: 0.3))
    let skewed = clock.epoch.advanced(bySeconds: 1)
    let app = try Self.appWindow(binary, clock: clock, epoch: skewed)
    try #require(app.width < Self.scale, "the round trip took longer than the skew it must catch")
    #expect(
      !app.contains, "app on an epoch 1 s late stamped \(app.stamp) inside [\(app.from), \(app.to)]"
    )
  }

  // MARK: - Round trips

  /// The mock (ctor: SOCKS listens from the start) rejects a SOCKS greeting of version 9 and
  /// logs `socks_rejected` before it closes the connection.
  static func mockWindow(_ binary: String, clock: ScaledClock) throws -> Window {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let port = try freeLoopbackPort()
    let log = directory + "/mock.jsonl"
    let mock = try launch(
      binary,
      [
        "mock-tor", "--personality", "ctor", "--listen", "127.0.0.1:\(port)", "--event-log", log,
      ] + clock.arguments)
    defer { stop(mock) }
    let address = try #require(SocketAddress("127.0.0.1:\(port)"))
    // Wait (at most 20 real seconds) for the listener: the mock is starting.
    let realTime = SystemClock()
    var connected: Socket?
    while connected == nil && mock.isRunning && realTime.now < 20 {
      connected = try? Socket.connect(to: address, timeout: 0.5)
      if connected == nil { realTime.sleepBlocking(seconds: 0.01) }
    }
    try #require(connected != nil, "the mock never listened")
    connected?.close()
    let from = clock.now
    let socket = try Socket.connect(to: address, timeout: 5)
    try socket.write([9, 1, 0])
    socket.setTimeouts(seconds: 5)
    while let bytes = try? socket.read(), !bytes.isEmpty {}
    socket.close()
    let to = clock.now
    let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    let line = try #require(
      text.split(separator: "\n").last { $0.contains(#""event":"socks_rejected""#) },
      "the mock logged no socks_rejected: \(text.suffix(300))")
    let stamp = try #require(jsonNumber(String(line), key: "time"))
    return Window(stamp: stamp, from: from, to: to)
  }

  /// The app (bitchat, arti backend) probes its SOCKS port from its start; the probe's socket
  /// event is stamped after a connect succeeded, which needs the test's listener.
  static func appWindow(_ binary: String, clock: ScaledClock, epoch: MonotonicInstant) throws
    -> Window
  {
    let directory = try temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let port = try freeLoopbackPort()
    let actions = directory + "/actions.jsonl"
    try #"{"at":0,"action":"start"}"#.appending("\n" + #"{"at":60,"action":"wait","seconds":0}"#)
      .write(toFile: actions, atomically: true, encoding: .utf8)
    let scale = clock.arguments[1]
    let output = Pipe()
    let app = try launch(
      binary,
      [
        "app", "--backend", "arti", "--socks", "127.0.0.1:\(port)", "--actions", actions,
        "--state-dir", directory + "/state", "--time-scale", scale, "--epoch", epoch.description,
      ], output: output)
    defer { stop(app) }
    let lines = LineReader(output.fileHandleForReading, clock: clock)
    _ = try #require(lines.waitFor(#""action":"start""#), "the app never started")
    let from = clock.now
    let listener = try Socket.listen(on: try #require(SocketAddress("127.0.0.1:\(port)")))
    defer { listener.close() }
    let (line, arrived) = try #require(
      lines.waitFor(#""purpose":"socks-probe""#), "the app's probe never connected")
    let stamp = try #require(jsonNumber(line, key: "t"))
    return Window(stamp: stamp, from: from, to: arrived)
  }

  // MARK: - Helpers

  static func launch(_ binary: String, _ arguments: [String], output: Pipe? = nil) throws
    -> Process
  {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = arguments
    // Named its parent, so it ends if this test process dies (ParentDeathWatch).
    process.environment = ParentDeathWatch.childEnvironment()
    process.standardOutput = output ?? FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    return process
  }

  static func stop(_ process: Process) {
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
  }

  static func temporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "failclosed-runclock-\(UUID().uuidString.prefix(8))"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
  }

  static func jsonNumber(_ line: String, key: String) -> Double? {
    guard let data = line.data(using: .utf8),
      let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    else { return nil }
    return (object[key] as? NSNumber)?.doubleValue
  }
}
