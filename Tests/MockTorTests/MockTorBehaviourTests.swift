import FailClosedSupport
import Foundation
import MockTor
import SOCKS
import TestSupport
import Testing

/// Fetches "/" from `host` through the SOCKS proxy at `proxy` with the project's own client
/// handshake; returns the HTTP response, or throws the SOCKS error.
func fetch(
  through proxy: SocketAddress, host: String, port: UInt16 = 80,
  credentials: SOCKSClientHandshake.Credentials = .none
)
  throws -> String
{
  // The proxy's reply is all it sends before the request: nothing is left over.
  let socket = try openStream(through: proxy, host: host, port: port, credentials: credentials)
  defer { socket.close() }
  try socket.write(Array("GET / HTTP/1.0\r\nHost: \(host)\r\n\r\n".utf8))
  var response: [UInt8] = []
  while let chunk = try? socket.read(), !chunk.isEmpty { response += chunk }
  return String(decoding: response, as: UTF8.self)
}

@Suite(.serialized) struct MockTorBehaviourTests {
  @Test func refusesNonLoopbackUnlessAllowed() throws {
    let configuration = MockTorConfiguration(socksAddress: SocketAddress("0.0.0.0:0")!)
    #expect(throws: MockTorError.nonLoopbackAddress("0.0.0.0:0")) { try MockTor(configuration) }
    var allowed = configuration
    allowed.allowNonLoopback = true
    _ = try MockTor(allowed)
  }

  @Test func artiBindsOnlyAfterBootstrapAndAllowsOnlyNoAuthConnect() async throws {
    let clock = ManualClock()
    let web = try TinyHTTPServer()
    defer { web.stop() }
    var map = DestinationMap()
    map.add("web.test", SocketAddress(bytes: [127, 0, 0, 1], port: web.port)!)
    let mock = try makeMock(.arti, plan: .healthy(after: 10), destinations: map) {
      $0.clock = clock
    }
    defer { mock.stop() }
    // The mock's monitor has read the plan at 0 (its first record) with the clock standing.
    #expect(await waitUntil(timeout: 5) { !mock.eventLog.events("bootstrap").isEmpty })
    #expect(mock.socksAddress == nil)
    #expect(mock.bootstrapProgress == 0)
    #expect(mock.bootstrapSummary == "Starting...")
    await clock.advance(by: 10)
    let proxy = try #require(mock.waitForListener())
    // The monitor binds in the turn it finds the plan at 100, after that turn's record: a bind
    // in any earlier turn (before the advance, or racing it) would come before that record.
    let order = mock.eventLog.events.compactMap { event -> String? in
      switch event["event"] {
      case "listener": return "listener"
      case "bootstrap" where event["progress"] == 100: return "ready"
      default: return nil
      }
    }
    #expect(order == ["ready", "listener"])
    #expect(mock.bootstrapProgress == 100)
    #expect(mock.bootstrapSummary == "Ready")
    #expect(try fetch(through: proxy, host: "web.test").hasSuffix(web.body))
    #expect(
      try probe(proxy, steps: [[0x05, 0x01, 0x02]])
        == ProbeResult(bytes: [0x05, 0xFF], closed: true))
    let resolve = try probe(
      proxy, steps: [[0x05, 0x01, 0x00], [0x05, 0xF0, 0x00, 0x03, 0x01, 0x61, 0, 0]])
    #expect(
      resolve
        == ProbeResult(bytes: [0x05, 0x00, 0x05, 0x01, 0x00, 0x01, 0, 0, 0, 0, 0, 0], closed: true))
    // A failed connect gets 0x05 and BND 0.0.0.0:0.
    #expect(throws: SOCKSError(.rejected(.connectionRefused), at: 3)) {
      try fetch(through: proxy, host: "nowhere.test")
    }
    let events = mock.eventLog.events("bootstrap").compactMap { $0["progress"]?.intValue }
    #expect(events.first == 0 && events.last == 100)
  }

  @Test func ctorStreamsWaitForTheBootstrap() async throws {
    let clock = ManualClock()
    let web = try TinyHTTPServer()
    defer { web.stop() }
    var map = DestinationMap()
    map.add("web.test", SocketAddress(bytes: [127, 0, 0, 1], port: web.port)!)
    let mock = try makeMock(.ctor, plan: .healthy(after: 30), destinations: map) {
      $0.clock = clock
    }
    defer { mock.stop() }
    let proxy = try #require(mock.socksAddress)
    let result = Mutex<String?>(nil)
    BlockingIO.detach("test.fetch") {
      let page = try? fetch(through: proxy, host: "web.test")
      result.withLock { $0 = page ?? "failed" }
    }
    // The stream is held: the clock stands before the bootstrap, so nothing can answer it.
    #expect(await waitUntil(timeout: 5) { mock.streamsWaitingForBootstrap == 1 })
    #expect(result.withLock { $0 } == nil, "the stream must wait while bootstrapping")
    await clock.advance(by: 30)
    #expect(await waitUntil(timeout: 5) { result.withLock { $0 } != nil })
    #expect(result.withLock { $0 }?.hasSuffix(web.body) == true)
  }

  @Test func ctorStreamWaitIsBounded() async throws {
    let clock = ManualClock()
    let mock = try makeMock(.ctor, plan: .healthy(after: 1000)) {
      $0.clock = clock
      $0.streamWaitLimit = 120
    }
    defer { mock.stop() }
    let proxy = try #require(mock.socksAddress)
    let result = Mutex<(any Error)?>(nil)
    BlockingIO.detach("test.fetch") {
      do { _ = try fetch(through: proxy, host: "web.test") } catch {
        result.withLock { $0 = error }
      }
    }
    // Held, its 120 s counted from the clock's 0: 121 s later it has waited past its limit.
    #expect(await waitUntil(timeout: 5) { mock.streamsWaitingForBootstrap == 1 })
    await clock.advance(by: 121)
    #expect(await waitUntil(timeout: 5) { result.withLock { $0 } != nil })
    #expect(result.withLock { $0 as? SOCKSError } == SOCKSError(.rejected(.ttlExpired), at: 3))
  }

  @Test func faultsPerDestination() throws {
    let web = try TinyHTTPServer(body: String(repeating: "x", count: 20_000))
    defer { web.stop() }
    var map = DestinationMap()
    for name in ["refused.test", "onion.test", "reset.test", "slow.test", "hole.test"] {
      map.add(name, SocketAddress(bytes: [127, 0, 0, 1], port: web.port)!)
    }
    let faults: [String: StreamToxics] = [
      "refused.test": StreamToxics([ReplyToxic(.connectionRefused)]),
      "onion.test": StreamToxics([ReplyToxic(.onionIntroductionFailed)]),
      "reset.test": StreamToxics([ResetPeerToxic(bytes: 1000)]),
      "slow.test": StreamToxics([
        LatencyToxic(seconds: 0.05), BandwidthToxic(bytesPerSecond: 400_000),
      ]),
      "hole.test": StreamToxics([BlackholeToxic()]),
    ]
    let mock = try makeMock(.ctor, destinations: map, faults: faults)
    defer { mock.stop() }
    let proxy = try #require(mock.socksAddress)
    #expect(throws: SOCKSError(.rejected(.connectionRefused), at: 3)) {
      try fetch(through: proxy, host: "refused.test")
    }
    #expect(throws: SOCKSError(.rejected(.onionIntroductionFailed), at: 3)) {
      try fetch(through: proxy, host: "onion.test")
    }
    let truncated = try fetch(through: proxy, host: "reset.test")
    #expect(truncated.utf8.count < 20_000)
    #expect(try fetch(through: proxy, host: "slow.test").hasSuffix(web.body))
    // A blackholed request never gets an answer.
    let hole = try probe(
      proxy,
      steps: [
        [0x05, 0x01, 0x00], [0x05, 0x01, 0x00, 0x03, 0x09] + Array("hole.test".utf8) + [0, 80],
      ], wait: 0.5)
    #expect(hole == ProbeResult(bytes: [0x05, 0x00], closed: false))
    #expect(throws: SOCKSError(.rejected(.hostUnreachable), at: 3)) {
      try fetch(through: proxy, host: "unmapped.test")
    }
    mock.stop()
    let outcomes = Dictionary(
      mock.eventLog.events("socks").map {
        ($0["destination"]?.stringValue ?? "", $0["outcome"]?.stringValue ?? "")
      },
      uniquingKeysWith: { first, _ in first })
    #expect(outcomes["reset.test"]?.hasPrefix("reset after") == true)
    #expect(outcomes["hole.test"] == "blackholed")
    #expect(outcomes["refused.test"] == "fault")
  }

  @Test func isolationCredentialsAreLogged() throws {
    let web = try TinyHTTPServer()
    defer { web.stop() }
    var map = DestinationMap()
    map.add("web.test", SocketAddress(bytes: [127, 0, 0, 1], port: web.port)!)
    let mock = try makeMock(.ctor, destinations: map)
    defer { mock.stop() }
    let proxy = try #require(mock.socksAddress)
    _ = try fetch(
      through: proxy, host: "web.test",
      credentials: .usernamePassword(
        username: Array("<torS0X>0".utf8), password: Array("circuit-7".utf8)))
    mock.stop()
    let record = try #require(mock.eventLog.events("socks").first)
    #expect(record["isolation"] == .object(["kind": "key", "key": "circuit-7"]))
  }

  @Test func idleHandshakesTimeOut() async throws {
    let clock = ManualClock()
    let mock = try makeMock(.ctor) {
      $0.clock = clock
      $0.handshakeTimeout = 30
    }
    defer { mock.stop() }
    let socket = try Socket.connect(to: try #require(mock.socksAddress), timeout: 5)
    defer { socket.close() }
    #expect(await waitUntil(timeout: 5) { mock.connectionCounts.current == 1 })
    await clock.advance(by: 31)
    socket.setTimeouts(seconds: 5)
    #expect((try? socket.read()) == [])
  }

  /// 2000 hostile connections (silent, half a greeting, garbage, a request trickled in and
  /// stalled) held open while a good client is served, then all dropped.
  @Test func hostileConnectionsDoNotStopService() async throws {
    let web = try TinyHTTPServer()
    defer { web.stop() }
    var map = DestinationMap()
    map.add("web.test", SocketAddress(bytes: [127, 0, 0, 1], port: web.port)!)
    let mock = try makeMock(.ctor, destinations: map)
    defer { mock.stop() }
    let proxy = try #require(mock.socksAddress)
    let (page, peak) = try await BlockingIO.run("test.hostile") {
      var rng = SystemRandomNumberGenerator()
      var hostile: [Socket] = []
      defer { for socket in hostile { socket.close() } }
      for index in 0..<2000 {
        guard let socket = try? Socket.connect(to: proxy, timeout: 5) else { continue }
        switch index % 4 {
        case 0: break
        case 1: try? socket.write([0x05])
        case 2: try? socket.write((0..<64).map { _ in UInt8.random(in: 0...255, using: &rng) })
        default: try? socket.write([0x05, 0x01, 0x00, 0x05, 0x01, 0x00, 0x03, 0x20, 0x61])
        }
        hostile.append(socket)
      }
      _ = waitUntil(timeout: 5) { mock.connectionCounts.current >= 1400 }
      let page = try fetch(through: proxy, host: "web.test")
      return (page, mock.connectionCounts.peak)
    }
    #expect(page.hasSuffix(web.body))
    // Garbage may close at once; the silent, partial and stalled ones (three quarters) stay.
    #expect(peak >= 1400, "peak \(peak)")
    #expect(await waitUntil(timeout: 5) { mock.connectionCounts.current == 0 })
    #expect(try fetch(through: proxy, host: "web.test").hasSuffix(web.body))
  }
}

/// A value behind a lock, for results handed between test threads.
final class Mutex<Value>: @unchecked Sendable {
  private var value: Value
  private let lock = NSLock()
  init(_ value: Value) { self.value = value }
  func withLock<R>(_ body: (inout Value) -> R) -> R { lock.withLock { body(&value) } }
}

@Suite struct MockTorEventLogTests {
  @Test func writesOneJSONObjectPerLine() throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent(
      "events-\(UUID()).jsonl"
    ).path
    defer { try? FileManager.default.removeItem(atPath: path) }
    let log = try MockTorEventLog(path: path)
    log.record("socks", time: 1.5, ["destination": "web.test", "raw_ip": false])
    log.record("control", time: 2, strings: ["command": "GETINFO"])
    let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
    #expect(lines.count == 2)
    #expect(lines[0] == #"{"destination":"web.test","event":"socks","raw_ip":false,"time":1.5}"#)
    #expect(log.events("control").first?["command"] == "GETINFO")
  }

  /// Records the loops log per stream are made only when read, once, and then read the same
  /// as records logged with their fields.
  @Test func deferredRecordsAreMadeOnceWhenRead() throws {
    let log = try MockTorEventLog(memoryLimit: 3)
    let made = Made()
    for index in 0..<5 {
      log.record("socks", time: Double(index)) {
        made.add()
        return ["index": .int(index)]
      }
    }
    #expect(made.count == 0)
    let first = log.events("socks")
    #expect(first.map { $0["index"]?.intValue } == [2, 3, 4])
    #expect(first.map { $0["time"] } == [.double(2), .double(3), .double(4)])
    #expect(made.count == 3)
    #expect(log.events("socks") == first)
    #expect(made.count == 3)
    // Control: an eager record reads the same.
    log.record("socks", time: 5, ["index": 5])
    #expect(log.events("socks").last == ["index": 5, "event": "socks", "time": .double(5)])
  }

  /// With a file the line cannot wait: the record is made and written at once.
  @Test func deferredRecordsAreWrittenAtOnceToAFile() throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent(
      "events-\(UUID()).jsonl"
    ).path
    defer { try? FileManager.default.removeItem(atPath: path) }
    let log = try MockTorEventLog(path: path)
    log.record("socks", time: 1.25) { ["destination": "web.test"] }
    let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
    #expect(lines == [#"{"destination":"web.test","event":"socks","time":1.25}"#])
  }

  @Test func unwritablePathIsNamed() {
    #expect(
      throws: MockTorError.eventLog(
        path: "/nonexistent/dir/x.jsonl", reason: "cannot create the file")
    ) {
      try MockTorEventLog(path: "/nonexistent/dir/x.jsonl")
    }
  }
}

@Suite struct MockTorBootstrapPlanTests {
  /// A crashing Tor takes its SOCKS port with it, the way a dead process does.
  @Test func crashClosesTheSOCKSPort() async throws {
    let clock = ManualClock()
    // An address of its own: on 127.0.0.1 another test's listener on port 0 may take the freed
    // port before the connect below (seen once in CI), and answer for the dead mock.
    let mock = try makeMock(.ctor, plan: .crash(after: 2)) {
      $0.clock = clock
      $0.socksAddress = SocketAddress("127.61.0.7:0")!
    }
    defer { mock.stop() }
    let proxy = try #require(mock.socksAddress)
    await clock.advance(by: 3)
    // The crash is logged once the listener is closed.
    #expect(await waitUntil(timeout: 5) { mock.eventLog.events("crash").count == 1 })
    #expect(mock.socksAddress == nil)
    #expect(throws: SystemError.self) { try Socket.connect(to: proxy, timeout: 1) }
  }

  @Test func neverStartingArtiNeverListens() throws {
    let mock = try makeMock(.arti, plan: .neverStarting)
    defer { mock.stop() }
    #expect(mock.waitForListener(timeout: 0.3) == nil)
    #expect(mock.bootstrapProgress == 0)
  }
}

/// Counts calls from any thread.
final class Made: @unchecked Sendable {
  private let lock = NSLock()
  private var calls = 0
  func add() { lock.withLock { calls += 1 } }
  var count: Int { lock.withLock { calls } }
}

@Suite struct DestinationMapLiteralTests {
  /// An IP literal mapped by name is still found once the map knows it holds literals.
  @Test func mappedLiteralIsFound() throws {
    var map = DestinationMap()
    map.add("web.test", SocketAddress("127.0.0.1:8080")!)
    #expect(map.target(for: .ipv4([10, 1, 2, 3]), port: 80) == nil)
    try map.add(parsing: "10.1.2.3=127.0.0.1:9090")
    #expect(map.target(for: .ipv4([10, 1, 2, 3]), port: 80) == SocketAddress("127.0.0.1:9090"))
    try map.add(parsing: "::2=127.0.0.1:0")
    #expect(
      map.target(for: .ipv6([UInt8](repeating: 0, count: 15) + [2]), port: 81)
        == SocketAddress("127.0.0.1:81"))
  }

  /// Control: without literals, a loopback literal is reachable as is, anything else is not.
  @Test func unmappedLiteralsWithoutLiteralKeys() {
    var map = DestinationMap()
    map.add("web.test", SocketAddress("127.0.0.1:8080")!)
    #expect(map.target(for: .ipv4([127, 0, 0, 2]), port: 80) == SocketAddress("127.0.0.2:80"))
    #expect(map.target(for: .ipv4([93, 184, 216, 34]), port: 80) == nil)
  }
}

/// Arti's bind after the bootstrap, when the port is held for a moment (a client's connect to
/// the unbound port that took it as its own source port): the error is logged once and the
/// mock binds as soon as the port is free, where it used to give up silently for the run.
@Suite struct MockTorBindRetryTests {
  @Test func aBindThatFailsIsLoggedAndTriedAgainUntilThePortIsFree() async throws {
    let holder = try Socket.listen(on: SocketAddress("127.0.0.1:0")!)
    let port = try #require(holder.localAddress?.port)
    let log = NSTemporaryDirectory() + "mock-bind-\(getpid()).jsonl"
    defer { try? FileManager.default.removeItem(atPath: log) }
    let clock = ManualClock()
    let mock = try makeMock(.arti, plan: .healthy(after: 5), eventLog: log) {
      $0.clock = clock
      $0.socksAddress = SocketAddress(bytes: [127, 0, 0, 1], port: port)!
    }
    defer { mock.stop() }
    await clock.advance(by: 5)
    // Canary: the port is held, so no listener, and the failure is in the event log.
    #expect(
      await waitUntil(timeout: 5) {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("listener-error")
      })
    #expect(mock.socksAddress == nil)
    holder.close()
    // Control: once free, the mock listens on it.
    #expect(await waitUntil(timeout: 5) { mock.socksAddress?.port == port })
    let errors =
      ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
      .components(separatedBy: "listener-error").count - 1
    #expect(errors == 1)
  }
}
