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
    let served = EventCollectorStrings()
    BlockingIO.detach("test.control") {
      defer { served.add("ended") }
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
    // The port read until the stopped backend closed its end: every command it sent is here.
    #expect(await waitUntil(timeout: 5) { !served.values.isEmpty })
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
    #expect(await waitUntil(timeout: 5) { backend.bootstrapProgress() >= 100 })
    let progress = backend.bootstrapProgress()
    #expect(backend.bootstrapSummary() == "Done")
    await stop(backend)
    #expect(!backend.isRunning())
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
    let address = SocketAddress(host: "127.0.0.1", port: try freeLoopbackPort())!
    let log = AppEventLog(clock: SystemClock())
    let summary = await Self.summaryAfterFailure(address: address, log: log)
    #expect(summary.hasPrefix("Error: control port 127.0.0.1:"))
    #expect(log.events(.tor).contains { $0["phase"] == "failed" })
    // 1.X on a manual clock, its first attempt at its launch (no first-check delay: the
    // controller's thread reads the clock when it launches, so the clock moves only once that
    // attempt shows), then one attempt per floor as the clock moves, each waited for; they are
    // stamped with that clock, a floor apart.
    let clock = ManualClock()
    let log1 = AppEventLog(clock: clock)
    var timings = OnionBrowserTimings()
    timings.firstCheck = 0
    let backend = await Self.unreachableBackend(
      address: address, log: log1, clock: clock, timings: timings)
    func attempts() -> [AppEvent] { log1.events(.tor).filter { $0["phase"] == "process" } }
    #expect(await waitUntil(timeout: 5) { attempts().count == 1 }, "\(attempts())")
    let floor = OnionBrowserHarnessDeviation().reconnectFloor
    for count in 2...5 {
      await clock.advance(by: floor)
      #expect(await waitUntil(timeout: 5) { attempts().count == count }, "\(attempts())")
    }
    let times = attempts().map(\.time)
    await ControlPortBackendTests.stop(backend)
    #expect(times.count == 5, "\(times)")
    // (A nanosecond of slack: the stamps are sums of the steps in floating point.)
    #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 >= floor - 1e-9 }, "\(times)")
  }

  /// 3.X against a port nobody listens on: its summary once it gave up.
  @AppActor static func summaryAfterFailure(address: SocketAddress, log: AppEventLog) async
    -> String
  {
    let backend = unreachableBackend(
      address: address, log: log, clock: SystemClock(), version: .v3)
    _ = await waitUntil(timeout: 5) { backend.bootstrapSummary().hasPrefix("Error") }
    let summary = backend.bootstrapSummary()
    await stop(backend)
    return summary
  }

  /// A started backend for `version` whose controller reads `clock`.
  @AppActor static func unreachableBackend(
    address: SocketAddress, log: AppEventLog, clock: any HarnessClock,
    version: OnionBrowserVersion = .v1, timings: OnionBrowserTimings = OnionBrowserTimings()
  ) -> ControlPortTorBackend {
    let backend = ControlPortTorBackend(
      control: address, authentication: .none, scheduler: ClockScheduler(clock: clock),
      log: log, version: version, timings: timings, clock: clock)
    _ = backend.start(dataDirectory: "/tmp", socksPort: 0)
    return backend
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

    /// `clock`: the controller's timers (the mock's plan runs in real time whatever it is).
    @AppActor func backend(
      _ version: OnionBrowserVersion, bridges: Bool = false, stopDisablesNetwork: Bool = false,
      timings: OnionBrowserTimings = ControlPortBackendMockTests.timings,
      clock: any HarnessClock = SystemClock()
    ) -> ControlPortTorBackend {
      ControlPortTorBackend(
        control: service.address, authentication: .password("s3cret"),
        scheduler: ClockScheduler(clock: clock), log: appLog, version: version,
        bridgesConfigured: bridges, timings: timings, stopDisablesNetwork: stopDisablesNetwork,
        clock: clock)
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
    // The mock has read the connection to its end: whatever the exit sent, it has seen.
    #expect(await waitUntil { setup.service.listener.connectionCount == 0 })
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
    #expect(await waitUntil { await Self.state(backend).ready })
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
    #expect(await waitUntil { await Self.state(backend).ready })
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

  /// The guard on the controller's clock, a manual one, moved by the test: past the guard once
  /// the mock's plan (in real time) has stalled, then twice the guard's time again. The
  /// controller connects at its launch (no delay: its thread reads the clock when it launches,
  /// so the clock moves only after the stall, which needs the connection).
  @Test(.timeLimit(.minutes(1)))
  func version2StalledBootstrapCyclesDisableNetworkOnce() async throws {
    let setup = try Setup(plan: "stall:conn")
    let clock = ManualClock()
    var timings = Self.timings
    timings.connectDelay2 = 0
    let backend = await setup.backend(.v2, timings: timings, clock: clock)
    func toggles(_ commands: [String]) -> [String] {
      commands.filter { $0.hasPrefix("SETCONF DisableNetwork") }
    }
    await Self.start(backend)
    // Stalled at conn (5 %): the mock's last phase of the plan; every phase re-armed the guard.
    #expect(await waitUntil { setup.torEvents("bootstrap").contains { $0["progress"] == 5 } })
    await clock.advance(by: 2 * timings.stallGuard)
    #expect(await waitUntil { toggles(setup.commands).count >= 3 })
    #expect(await waitUntil { !setup.service.driver.isNetworkDisabled })
    // Twice the guard's time again. The controller looks at its timers before it takes a
    // network change, so the change's SETCONF marks where a second cycle would have been sent.
    await clock.advance(by: 2 * timings.stallGuard)
    await Self.networkChanged(backend)
    let ipSettings = #"SETCONF ClientPreferIPv6ORPort="auto" ClientUseIPv4="1" ClientUseIPv6="1""#
    #expect(await waitUntil { setup.commands.contains(ipSettings) })
    #expect(
      toggles(Array(setup.commands.prefix { $0 != ipSettings })) == [
        "SETCONF DisableNetwork=0", "SETCONF DisableNetwork=1", "SETCONF DisableNetwork=0",
      ])
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
