import FailClosedSupport
import Foundation
import MockTor
import OnionBrowserModel
import TestSupport
import Testing
import TorControl

@testable import SystemUnderTest

@Suite struct ControlPortBackendTests {
  /// A scripted control port: password auth, SETCONF, then bootstrap phases; 1.X's client
  /// (lower-case commands ended by LF, polls).
  @Test(.timeLimit(.minutes(1)))
  func drivesAControlPortUntilBootstrapped() async throws {
    let listener = try Socket.listen(on: SocketAddress("127.0.0.1:0")!)
    defer { listener.close() }
    let address = listener.localAddress!
    let commands = EventCollectorStrings()
    BlockingIO.detach("test.control") {
      guard let (client, _) = try? listener.accept() else { return }
      defer { client.close() }
      client.setTimeouts(seconds: 5)
      var buffer = ""
      var polls = 0
      while let chunk = try? client.read(max: 4096), !chunk.isEmpty {
        buffer += String(decoding: chunk, as: UTF8.self)
        while let end = buffer.range(of: "\n") {
          var line = String(buffer[..<end.lowerBound])
          if line.hasSuffix("\r") { line.removeLast() }
          buffer.removeSubrange(..<end.upperBound)
          commands.add(line)
          var reply = "250 OK\r\n"
          if line.hasPrefix("AUTHENTICATE") && line != #"AUTHENTICATE "s3cret""# {
            reply = "515 Authentication failed\r\n"
          } else if line.lowercased().hasPrefix("getinfo status/bootstrap-phase") {
            polls += 1
            let progress = polls >= 2 ? 100 : 10
            let summary = polls >= 2 ? "Done" : "Connecting to a relay"
            reply =
              "250-status/bootstrap-phase=NOTICE BOOTSTRAP PROGRESS=\(progress) TAG=x SUMMARY=\"\(summary)\"\r\n250 OK\r\n"
          }
          _ = try? client.write(Array(reply.utf8))
        }
      }
    }
    let progress = try await Self.runBackend(address: address)
    #expect(progress == 100)
    let seen = commands.values
    #expect(seen.first == #"AUTHENTICATE "s3cret""#)
    // 1.X polls, sets no events; the harness enabled the network; 1.X's exit sends nothing.
    #expect(!seen.contains("SETEVENTS STATUS_CLIENT"))
    #expect(seen.contains("SETCONF DisableNetwork=0"))
    #expect(!seen.contains("SETCONF DisableNetwork=1"))
  }

  @AppActor static func runBackend(address: SocketAddress) async throws -> Int {
    let scheduler = ClockScheduler(clock: SystemClock())
    let backend = ControlPortTorBackend(
      control: address, authentication: .password("s3cret"), scheduler: scheduler)
    #expect(backend.start(dataDirectory: "/tmp", socksPort: 39050) == 0)
    #expect(backend.start(dataDirectory: "/tmp", socksPort: 39050) == -1)
    for _ in 0..<100 where backend.bootstrapProgress() < 100 {
      try await Task.sleep(nanoseconds: 50_000_000)
    }
    let progress = backend.bootstrapProgress()
    #expect(backend.bootstrapSummary() == "Done")
    await stop(backend)
    #expect(!backend.isRunning())
    try await Task.sleep(nanoseconds: 100_000_000)
    return progress
  }

  @AppActor static func stop(_ backend: ControlPortTorBackend) async {
    await withCheckedContinuation { continuation in
      backend.stop { continuation.resume() }
    }
  }

  /// 3.X gives up (TorManager.swift l.119-130); 1.X keeps reconnecting (TorController.m
  /// l.264-272), no sooner than the harness's floor.
  @Test(.timeLimit(.minutes(1)))
  func unreachableControlPort() async throws {
    // A port nobody listens on: bind, read the port, close.
    let probe = try Socket.listen(on: SocketAddress("127.0.0.1:0")!)
    let address = probe.localAddress!
    probe.close()
    let log = AppEventLog(clock: SystemClock())
    let summary = try await Self.summaryAfterFailure(address: address, log: log, version: .v3)
    #expect(summary.hasPrefix("Error: control port 127.0.0.1:"))
    #expect(log.events(.tor).contains { $0["phase"] == "failed" })
    let log1 = AppEventLog(clock: SystemClock())
    _ = try await Self.summaryAfterFailure(address: address, log: log1, version: .v1)
    let attempts = log1.events(.tor).filter { $0["phase"] == "process" }.count
    #expect(attempts >= 2)
    #expect(attempts <= 30)  // 5 s at one attempt per 0.25 s at most
  }

  @AppActor static func summaryAfterFailure(
    address: SocketAddress, log: AppEventLog, version: OnionBrowserVersion
  ) async throws -> String {
    let backend = ControlPortTorBackend(
      control: address, authentication: .none, scheduler: ClockScheduler(clock: SystemClock()),
      log: log, version: version)
    _ = backend.start(dataDirectory: "/tmp", socksPort: 0)
    for _ in 0..<(version == .v1 ? 50 : 250) where !backend.bootstrapSummary().hasPrefix("Error") {
      try await Task.sleep(nanoseconds: 20_000_000)
    }
    let summary = backend.bootstrapSummary()
    await stop(backend)
    return summary
  }
}

/// The backend over real loopback sockets against the mock's ctor control port.
@Suite struct ControlPortBackendMockTests {
  /// Onion Browser's numbers, shortened so each test takes a second or two.
  static let timings: OnionBrowserTimings = {
    var timings = OnionBrowserTimings()
    timings.heartbeatInterval = 0.3
    timings.heartbeatTimeout = 1.0
    timings.reconnectAfterHUP = 0.3
    timings.stallGuard = 1.0
    timings.stallGuardCheck = 0.1
    timings.connectDelay2 = 0.1
    timings.connectDelay3 = 0.1
    return timings
  }()

  /// A mock ctor control port (password auth, DisableNetwork 1 at start, as Onion Browser's tor)
  /// and a backend attached to it.
  final class Setup: @unchecked Sendable {
    let service: ControlPortService
    let mockLog = EventCollectorStrings()
    let appLog = AppEventLog(clock: SystemClock())

    init(plan: String) throws {
      let mockLog = self.mockLog
      service = try ControlPortService(
        port: 0, auth: "password:s3cret", plan: plan, clock: SystemClock(),
        socksListeners: ["127.0.0.1:39050"], disableNetwork: true,
        log: { event, _, fields in
          guard event == "control" else { return }
          mockLog.add(
            [fields["command"] ?? "", fields["arguments"] ?? ""].filter { !$0.isEmpty }
              .joined(separator: " "))
        })
      service.start()
    }

    deinit { service.stop() }

    /// What the mock was sent, in order.
    var commands: [String] { mockLog.values }

    @AppActor func backend(
      _ version: OnionBrowserVersion, bridges: Bool = false, stopDisablesNetwork: Bool = false
    ) -> ControlPortTorBackend {
      ControlPortTorBackend(
        control: service.address, authentication: .password("s3cret"),
        scheduler: ClockScheduler(clock: SystemClock()), log: appLog, version: version,
        bridgesConfigured: bridges, timings: ControlPortBackendMockTests.timings,
        stopDisablesNetwork: stopDisablesNetwork)
    }

    func torEvents(_ phase: String) -> [AppEvent] {
      appLog.events(.tor).filter { $0["phase"]?.description == phase }
    }
  }

  @AppActor static func start(_ backend: ControlPortTorBackend) {
    #expect(backend.start(dataDirectory: "/tmp", socksPort: 0) == 0)
  }

  @AppActor static func progress(_ backend: ControlPortTorBackend) -> Int {
    backend.bootstrapProgress()
  }

  @Test(.timeLimit(.minutes(1)))
  func version1BootstrapsToOneHundredByPolling() async throws {
    let setup = try Setup(plan: "healthy:1")
    let backend = await setup.backend(.v1)
    await Self.start(backend)
    let done = await waitUntil {
      setup.torEvents("bootstrap").contains { $0["progress"] == 100 }
    }
    #expect(done)
    #expect(await Self.progress(backend) == 100)
    let commands = setup.commands.map { $0.lowercased() }
    #expect(
      Array(commands.prefix(2)) == ["authenticate [scrubbed]", "setconf disablenetwork=0"])
    #expect(commands.filter { $0 == "getinfo status/bootstrap-phase" }.count >= 2)
    #expect(!commands.contains { $0.hasPrefix("setevents") })
    // Each phase once, in order, ending at 100.
    let progress = setup.torEvents("bootstrap").compactMap { event -> Int? in
      if case .int(let value) = event["progress"] { return value }
      return nil
    }
    #expect(progress == progress.sorted())
    #expect(Set(progress).count == progress.count)
    #expect(progress.count > 3)
    // Logged commands: setup and stop, never the polls.
    let logged = setup.torEvents("command").compactMap { $0["command"]?.description }
    #expect(!logged.contains(OnionBrowser1Controller.pollCommand))
    #expect(logged.contains("SETCONF DisableNetwork=0"))
    // 1.X's exit sends nothing: its tor dies with the process. (A poll or a 5 s heartbeat
    // already on its way when the stop lands is no command of the exit's: a heartbeat arriving
    // there failed this test once under load.)
    func nonPolls() -> [String] {
      setup.commands.filter {
        !["getinfo status/bootstrap-phase", "getinfo orconn-status"].contains($0.lowercased())
      }
    }
    let before = nonPolls()
    await ControlPortBackendTests.stop(backend)
    try await Task.sleep(nanoseconds: 200_000_000)
    #expect(nonPolls() == before)
  }

  /// bitchat over someone else's tor (`--backend ctor`): arti_stop stops Arti, so the stop ends
  /// with DisableNetwork=1 (not Onion Browser's own step).
  @Test(.timeLimit(.minutes(1)))
  func bitchatsStopDisablesTheNetwork() async throws {
    let setup = try Setup(plan: "healthy:0.5")
    let backend = await setup.backend(.v1, stopDisablesNetwork: true)
    await Self.start(backend)
    #expect(
      await waitUntil { setup.torEvents("bootstrap").contains { $0["progress"] == 100 } })
    #expect(!setup.service.driver.isNetworkDisabled)
    await ControlPortBackendTests.stop(backend)
    #expect(await waitUntil { setup.service.driver.isNetworkDisabled })
    #expect(setup.torEvents("command").last?["command"] == "SETCONF DisableNetwork=1")
  }

  /// 2.X and 3.X are ready at the circuit; at the end 3.X shuts tor down and 2.X only closes
  /// its connection (AppDelegate.swift @9a17dd4f l.296-301 leaves OnionManager alone: what
  /// Onion Browser's own code showed, docs/onion-browser-source.md).
  @Test(.timeLimit(.minutes(1)), arguments: [OnionBrowserVersion.v2, .v3])
  func eventsVersionsAreReadyAtTheCircuitAndEndAsTheirApp(_ version: OnionBrowserVersion)
    async throws
  {
    let setup = try Setup(plan: "healthy:1")
    let backend = await setup.backend(version)
    await Self.start(backend)
    var ready = false
    for _ in 0..<500 where !ready {
      ready = await Self.state(backend).ready
      if !ready { try await Task.sleep(nanoseconds: 20_000_000) }
    }
    #expect(ready)
    let commands = setup.commands
    #expect(commands.contains("SETEVENTS STATUS_CLIENT"))
    #expect(commands.contains("GETINFO status/circuit-established"))
    #expect(!commands.contains { $0.lowercased().contains("bootstrap-phase") })
    if version == .v3 {
      #expect(commands.contains("GETINFO net/listeners/socks"))
      #expect(await Self.state(backend).socks != nil)
    }
    await ControlPortBackendTests.stop(backend)
    if version == .v3 {
      #expect(await waitUntil { setup.service.driver.signals.contains("SHUTDOWN") })
    } else {
      #expect(await waitUntil { setup.service.listener.connectionCount == 0 })
      #expect(!setup.service.driver.signals.contains("SHUTDOWN"))
    }
  }

  @AppActor static func state(_ backend: ControlPortTorBackend) -> OnionBrowserTorState {
    backend.browserState
  }

  @Test(.timeLimit(.minutes(1)))
  func version1HUPsWhenTheHeartbeatAnswerIsWithheld() async throws {
    let setup = try Setup(plan: "healthy:0.5")
    let backend = await setup.backend(.v1)
    await Self.start(backend)
    #expect(
      await waitUntil { setup.torEvents("bootstrap").contains { $0["progress"] == 100 } })
    // Heartbeats answered at once: no HUP.
    #expect(
      await waitUntil {
        setup.commands.filter { $0.lowercased() == "getinfo orconn-status" }.count >= 2
      })
    #expect(!setup.service.driver.signals.contains("HUP"))
    setup.service.listener.orconnStatusReplyDelay = 3
    #expect(await waitUntil { setup.service.driver.signals.contains("HUP") })
    let timeouts = setup.torEvents("reply-timeout")
    #expect(timeouts.first?["command"] == .string(OnionBrowser1Controller.heartbeatCommand))
    #expect(setup.torEvents("command").contains { $0["command"] == "SIGNAL HUP" })
    // Heartbeats are not logged as commands; after the HUP 1.X connects and authenticates anew.
    #expect(
      !setup.torEvents("command").contains {
        $0["command"] == .string(OnionBrowser1Controller.heartbeatCommand)
      })
    #expect(
      await waitUntil {
        setup.commands.filter { $0.lowercased() == "authenticate [scrubbed]" }.count >= 2
      })
    await ControlPortBackendTests.stop(backend)
  }

  @Test(.timeLimit(.minutes(1)), arguments: [OnionBrowserVersion.v2, .v3])
  func networkChangeSetsIPThenReloadThenNewnym(_ version: OnionBrowserVersion) async throws {
    let setup = try Setup(plan: "healthy:0.5")
    let backend = await setup.backend(version)
    await Self.start(backend)
    // Once bootstrapped: while tor's events flow, one arriving before RELOAD's answer is taken
    // as that answer and costs the NEWNYM (Tor.framework's quirk, OnionBrowserControllerTests).
    var ready = false
    for _ in 0..<500 where !ready {
      ready = await Self.state(backend).ready
      if !ready { try await Task.sleep(nanoseconds: 20_000_000) }
    }
    #expect(ready)
    await Self.networkChanged(backend)
    #expect(await waitUntil { setup.service.driver.signals.count >= 2 })
    #expect(setup.service.driver.signals == ["RELOAD", "NEWNYM"])
    // The reload brought back the mock's "torrc" DisableNetwork 1; after RELOAD's answer the
    // harness enabled the network again (OnionBrowserHarnessDeviation).
    let expected = ["SIGNAL RELOAD", "SIGNAL NEWNYM", "SETCONF DisableNetwork=0"]
    #expect(await waitUntil { Set(setup.commands.suffix(3)) == Set(expected) })
    #expect(
      setup.commands.contains(
        #"SETCONF ClientPreferIPv6ORPort="auto" ClientUseIPv4="1" ClientUseIPv6="1""#))
    #expect(!setup.service.driver.isNetworkDisabled)
    await ControlPortBackendTests.stop(backend)
  }

  @AppActor static func networkChanged(_ backend: any TorBackend) { backend.networkChanged() }

  /// As Debian's tor does with `DisableNetwork 1` in its torrc: a reload brings it back.
  @Test func mockReloadRestoresTheConfiguredDisableNetwork() throws {
    let setup = try Setup(plan: "healthy:5")
    let driver = setup.service.driver
    #expect(driver.isNetworkDisabled)
    driver.setDisableNetwork(false)
    driver.controlSignal("NEWNYM")
    #expect(!driver.isNetworkDisabled)
    driver.controlSignal("RELOAD")
    #expect(driver.isNetworkDisabled)
    driver.setDisableNetwork(false)
    driver.controlSignal("HUP")
    #expect(driver.isNetworkDisabled)
  }

  @Test(.timeLimit(.minutes(1)))
  func version2StalledBootstrapCyclesDisableNetworkOnce() async throws {
    let setup = try Setup(plan: "stall:conn")
    let backend = await setup.backend(.v2)
    await Self.start(backend)
    #expect(
      await waitUntil {
        setup.commands.filter { $0.hasPrefix("SETCONF DisableNetwork") }.count >= 3
      })
    // Twice the guard's time again: it does not repeat.
    try await Task.sleep(nanoseconds: 2_000_000_000)
    let toggles = setup.commands.filter { $0.hasPrefix("SETCONF DisableNetwork") }
    #expect(
      toggles == [
        "SETCONF DisableNetwork=0", "SETCONF DisableNetwork=1", "SETCONF DisableNetwork=0",
      ])
    #expect(!setup.service.driver.isNetworkDisabled)
    #expect(setup.torEvents("problem").contains { $0["reason"] == "no-progress" })
    #expect(await Self.progress(backend) == 5)
    await ControlPortBackendTests.stop(backend)
  }

  @Test(.timeLimit(.minutes(1)))
  func version2WithBridgesTheStallIsOnlyReported() async throws {
    let setup = try Setup(plan: "stall:conn")
    let backend = await setup.backend(.v2, bridges: true)
    await Self.start(backend)
    #expect(
      await waitUntil {
        setup.torEvents("problem").contains { $0["reason"] == "no-progress" }
      })
    #expect(
      setup.commands.filter { $0.hasPrefix("SETCONF DisableNetwork") } == [
        "SETCONF DisableNetwork=0"
      ])
    await ControlPortBackendTests.stop(backend)
  }
}

final class EventCollectorStrings: @unchecked Sendable {
  private let lock = NSLock()
  private var list: [String] = []
  func add(_ value: String) { lock.withLock { list.append(value) } }
  var values: [String] { lock.withLock { list } }
}
