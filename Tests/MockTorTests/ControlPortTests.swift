import FailClosedSupport
import Foundation
import Testing
import TorControl

@testable import MockTor

@Suite struct ControlPortTests {
  static let loopbackAny = SocketAddress("127.0.0.1:0")!

  /// A ctor control port on a free port, driven by `clock`.
  static func makePort(
    plan: BootstrapPlan, clock: any HarnessClock, auth: ControlAuthentication,
    disableNetwork: Bool = false, recorder: DriverRecorder? = nil
  ) throws -> (BootstrapDriver, ControlPortListener) {
    let driver = BootstrapDriver(
      simulator: BootstrapSimulator(plan: plan, personality: .ctor), clock: clock,
      disableNetwork: disableNetwork, socksListeners: ["127.0.0.1:39050"],
      hooks: recorder?.hooks ?? .init())
    let listener = try ControlPortListener(
      address: loopbackAny, authentication: auth, backend: driver)
    driver.attach(listener)
    listener.start()
    return (driver, listener)
  }

  @Test func servesSessionsAndPushesBootstrapEvents() async throws {
    let clock = ManualClock()
    let recorder = DriverRecorder()
    let (driver, listener) = try Self.makePort(
      plan: .stalled(atTag: "conn", failure: .connectRefused), clock: clock,
      auth: ControlAuthentication(password: "pw"), recorder: recorder)
    defer { listener.stop() }
    driver.advance()
    let client = try ControlTestClient(port: listener.address.port)
    var events: [ControlMessage] = []
    #expect(try client.command("AUTHENTICATE \"pw\"\r\n", events: &events)?.code == 250)
    let phase = try client.command("GETINFO status/bootstrap-phase\r\n", events: &events)
    #expect(
      phase?.value(for: "status/bootstrap-phase")
        == "NOTICE BOOTSTRAP PROGRESS=0 TAG=starting SUMMARY=\"Starting\"")
    #expect(try client.command("SETEVENTS STATUS_CLIENT\r\n", events: &events)?.code == 250)
    await clock.advance(by: 0.5 + 16)
    driver.advance()
    var lines: [String] = []
    for _ in 0..<11 {
      guard let event = try client.next() else { break }
      lines.append(event.lines[0].text)
    }
    #expect(
      lines.first
        == "STATUS_CLIENT NOTICE BOOTSTRAP PROGRESS=5 TAG=conn SUMMARY=\"Connecting to a relay\"")
    #expect(lines.count == 11)
    #expect(
      lines.last?.contains(
        "WARNING=\"Connection refused\" REASON=CONNECTREFUSED COUNT=10 RECOMMENDATION=warn") == true
    )
    let info = try client.command("GETINFO net/listeners/socks\r\n", events: &events)
    #expect(info?.value(for: "net/listeners/socks") == "\"127.0.0.1:39050\"")
    #expect(recorder.commands.first == "AUTHENTICATE [scrubbed]")
    #expect(recorder.commands.contains("SETEVENTS STATUS_CLIENT"))
  }

  @Test func disableNetworkFreezesTheBootstrapUntilCleared() async throws {
    let clock = ManualClock()
    let recorder = DriverRecorder()
    let (driver, listener) = try Self.makePort(
      plan: .healthy(after: 17), clock: clock, auth: .none, disableNetwork: true,
      recorder: recorder)
    defer { listener.stop() }
    await clock.advance(by: 100)
    driver.advance()
    #expect(driver.currentState.progress == 0)
    let client = try ControlTestClient(port: listener.address.port)
    var events: [ControlMessage] = []
    _ = try client.command("AUTHENTICATE\r\n", events: &events)
    #expect(
      try client.command("GETCONF DisableNetwork\r\n", events: &events)?.lines[0].text
        == "DisableNetwork=1")
    #expect(try client.command("SETCONF DisableNetwork=0\r\n", events: &events)?.code == 250)
    #expect(recorder.network == [false])
    await clock.advance(by: 17)
    driver.advance()
    #expect(driver.currentState.isReady)
    let status = try client.command("GETINFO circuit-status orconn-status\r\n", events: &events)
    #expect(status?.value(for: "circuit-status")?.hasPrefix("1 BUILT $") == true)
    #expect(status?.value(for: "orconn-status")?.hasSuffix(" CONNECTED") == true)
  }

  @Test func shutdownSignalRepliesThenCloses() throws {
    let recorder = DriverRecorder()
    let (driver, listener) = try Self.makePort(
      plan: .healthy(after: 1), clock: ManualClock(), auth: .none, recorder: recorder)
    defer { listener.stop() }
    let client = try ControlTestClient(port: listener.address.port)
    _ = try client.exchange("AUTHENTICATE\r\n", closeWait: 0.05)
    let (reply, closed) = try client.exchange("SIGNAL SHUTDOWN\r\n")
    #expect(reply == "250 OK\r\n")
    #expect(closed)
    #expect(driver.hasExited)
    #expect(recorder.signals == ["SHUTDOWN"])
  }

  @Test func crashDropsControllers() async throws {
    let clock = ManualClock()
    let (driver, listener) = try Self.makePort(
      plan: .crash(after: 3), clock: clock, auth: .none)
    defer { listener.stop() }
    let client = try ControlTestClient(port: listener.address.port)
    _ = try client.exchange("AUTHENTICATE\r\n", closeWait: 0.05)
    await clock.advance(by: 3)
    driver.advance()
    #expect(driver.hasExited)
    #expect(try client.next() == nil)
  }

  @Test func refusesNonLoopbackAddresses() {
    #expect(throws: ControlPortError.self) {
      _ = try ControlPortListener(
        address: SocketAddress("0.0.0.0:0")!, authentication: .none,
        backend: BootstrapDriver(
          simulator: BootstrapSimulator(plan: .neverStarting, personality: .ctor),
          clock: ManualClock()))
    }
  }

  @Test func hostileControllersDoNotStopGoodOnes() throws {
    let (_, listener) = try Self.makePort(
      plan: .neverStarting, clock: ManualClock(), auth: .none)
    defer { listener.stop() }
    var hostile: [Socket] = []
    defer { for socket in hostile { socket.close() } }
    let port = listener.address.port
    for index in 0..<100 {
      let socket = try Socket.connect(to: SocketAddress("127.0.0.1:\(port)")!, timeout: 5)
      switch index % 4 {
      case 0: try socket.write([0xFF, 0x00, 0x00, 0x01])  // v0 protocol
      case 1: try socket.write(Array("GET / HTTP/1.1\r\n".utf8))
      case 2: try socket.write(Array("GETINFO version\r\n".utf8))  // unauthenticated
      default: try socket.write(Array("AUTHEN".utf8))  // stalls mid-line
      }
      hostile.append(socket)
    }
    let good = try ControlTestClient(port: port)
    var events: [ControlMessage] = []
    #expect(try good.command("AUTHENTICATE\r\n", events: &events)?.code == 250)
    #expect(
      try good.command("GETINFO version\r\n", events: &events)?.value(for: "version")
        == "0.4.9.11")
  }
}

@Suite struct ControlPortServiceTests {
  final class Lines: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [(String, [String: String])] = []
    func add(_ event: String, _ fields: [String: String]) {
      lock.withLock { entries.append((event, fields)) }
    }
    var all: [(String, [String: String])] { lock.withLock { entries } }
  }

  @Test func textOptionsErrorsNameTheOption() {
    #expect {
      _ = try ControlPortService(port: 0, auth: "none", plan: "stall:nosuch", clock: ManualClock())
    } throws: { "\($0)".hasPrefix("--bootstrap-plan: bootstrap plan \"stall:nosuch\"") }
    #expect {
      _ = try ControlPortService(port: 0, auth: "magic", plan: "healthy", clock: ManualClock())
    } throws: { "\($0)".hasPrefix("--control-auth: control auth \"magic\"") }
  }

  @Test func logsBootstrapStepsAndCommands() async throws {
    let lines = Lines()
    let clock = ManualClock()
    let service = try ControlPortService(
      port: 0, auth: "password:pw", plan: "healthy:17", clock: clock,
      log: { event, _, fields in lines.add(event, fields) })
    service.start()
    defer { service.stop() }
    let client = try ControlTestClient(port: service.address.port)
    var events: [ControlMessage] = []
    #expect(try client.command("AUTHENTICATE \"pw\"\r\n", events: &events)?.code == 250)
    await clock.advance(by: 17)
    service.driver.advance()
    #expect(try client.command("SIGNAL NEWNYM\r\n", events: &events)?.code == 250)
    let logged = lines.all
    #expect(
      logged.contains {
        $0.0 == "control" && $0.1["command"] == "AUTHENTICATE" && $0.1["arguments"] == "[scrubbed]"
      })
    #expect(
      logged.contains {
        $0.0 == "control" && $0.1["command"] == "SIGNAL" && $0.1["arguments"] == "NEWNYM"
      })
    #expect(
      logged.contains {
        $0.0 == "control_bootstrap" && $0.1["tag"] == "done" && $0.1["progress"] == "100"
      })
  }
}
