import OnionBrowserModel
import Testing
import TorControl

@testable import OnionBrowserModel

/// Each Onion Browser version's controller against synthetic tor answers and synthetic times,
/// one test per rule of issue 19, each citing the file and line it follows:
/// 1.X OnionBrowser/TorController.m and OnionBrowser/OnionBrowser/AppDelegate.m @6ec0fdfc
/// ("TC.m", "AD.m"); 2.X OnionBrowser/OnionManager.swift and AppDelegate.swift @9a17dd4f
/// ("OM", "AD2"); 3.X OnionBrowser/TorManager.swift and AppDelegate.swift @44edf9a8 ("TM",
/// "AD3"); iCepa/Tor.framework Tor/Classes/Core/TORController.m v407.13.1 = v408.10.1 ("TF.m").
@Suite struct OnionBrowserControllerTests {
  /// Drives a controller and keeps everything it sent and reported, with times.
  struct Harness {
    var controller: OnionBrowserController
    var sent: [(time: Double, line: String)] = []
    var reports: [OnionBrowserReport] = []
    var connects: [Double] = []
    var closes: [Double] = []
    var exited = false
    var lineEndings: Set<String> = []

    init(
      _ version: OnionBrowserVersion, deviation: OnionBrowserHarnessDeviation = .none,
      bridges: Bool = false, authenticate: String = "AUTHENTICATE"
    ) {
      controller = OnionBrowserController(
        configuration: .init(
          version: version, authenticate: authenticate, bridgesConfigured: bridges,
          deviation: deviation))
    }

    /// Takes an output as the edge would: a `connect` is answered by `connected` at once.
    mutating func take(_ output: OnionBrowserOutput, at time: Double) {
      sent += output.lines.map { (time, $0) }
      if !output.lines.isEmpty { lineEndings.insert(output.lineEnding) }
      reports += output.reports
      if output.close { closes.append(time) }
      exited = exited || output.exitApp
      if output.connect {
        connects.append(time)
        take(controller.connected(at: time), at: time)
      }
    }

    mutating func launch(at time: Double = 0) { take(controller.launch(at: time), at: time) }
    mutating func feed(_ text: String, at time: Double) {
      take(controller.receive(Array(text.utf8), at: time), at: time)
    }
    mutating func tick(_ time: Double) { take(controller.tick(at: time), at: time) }

    /// Ticks at every deadline up to `end`, answering nothing.
    mutating func run(until end: Double) {
      for _ in 0..<100_000 {
        guard let next = controller.nextDeadline, next <= end else { return }
        tick(next)
      }
    }

    var lines: [String] { sent.map(\.line) }
    func times(of line: String) -> [Double] { sent.filter { $0.line == line }.map(\.time) }
    func count(_ line: String) -> Int { sent.filter { $0.line == line }.count }
    var ready: Bool { reports.contains(.ready) }
  }

  static func approx(_ a: Double?, _ b: Double) -> Bool { a.map { abs($0 - b) < 1e-9 } ?? false }
  static func phase(_ progress: Int, _ tag: String = "conn", warn: Bool = false) -> String {
    "\(warn ? "WARN" : "NOTICE") BOOTSTRAP PROGRESS=\(progress) TAG=\(tag) SUMMARY=\"x\""
  }
  static func poll(_ progress: Int) -> String {
    "250-status/bootstrap-phase=\(phase(progress))\r\n250 OK\r\n"
  }
  static func event(_ progress: Int) -> String { "650 STATUS_CLIENT \(phase(progress))\r\n" }
  static let established = "650 STATUS_CLIENT NOTICE CIRCUIT_ESTABLISHED\r\n"
  static let ok = "250 OK\r\n"
  static let poll1 = OnionBrowser1Controller.pollCommand
  static let heartbeat1 = OnionBrowser1Controller.heartbeatCommand

  /// 1.X launched at 0, connected at 0.15 (TC.m l.85-89) and authenticated at `at`.
  static func v1Authenticated(
    at time: Double = 0.2, deviation: OnionBrowserHarnessDeviation = .none
  )
    -> Harness
  {
    var h = Harness(.v1, deviation: deviation)
    h.launch(at: 0)
    h.tick(0.15)
    h.feed(ok, at: time)
    return h
  }

  /// 1.X at its first 100 % at `at`.
  static func v1Connected(at time: Double = 1) -> Harness {
    var h = v1Authenticated()
    h.feed(poll(100), at: time)
    return h
  }

  /// 2.X or 3.X launched at 0, authenticated, events set, circuit-established answered "0".
  static func tfSetUp(_ version: OnionBrowserVersion, bridges: Bool = false) -> Harness {
    var h = Harness(version, bridges: bridges)
    h.launch(at: 0)
    let connectAt = version == .v2 ? 1.0 : 0.65
    h.tick(connectAt)
    h.feed(ok, at: connectAt)  // AUTHENTICATE
    h.feed(ok, at: connectAt)  // SETEVENTS STATUS_CLIENT
    h.feed("250-status/circuit-established=0\r\n250 OK\r\n", at: connectAt)
    return h
  }

  // MARK: - Row 1: TAKEOWNERSHIP is the harness's, never Onion Browser's

  @Test(arguments: OnionBrowserVersion.allCases)
  func noVersionSendsTakeOwnership_TFm_has_no_such_command(_ version: OnionBrowserVersion) {
    var h = version == .v1 ? Self.v1Connected() : Self.tfSetUp(version)
    h.run(until: 30)
    #expect(!h.lines.contains("TAKEOWNERSHIP"))
    // The only DisableNetwork=0 is 2.X's guard cycle, right after its DisableNetwork=1.
    let setup = h.lines.prefix { $0 != "SETCONF DisableNetwork=1" }
    #expect(!setup.contains(OnionBrowserHarnessDeviation.enableNetworkCommand))
  }

  @Test func harnessDeviationAddsItsStepsAfterTheAppsOwnSetup() {
    let harness = OnionBrowserHarnessDeviation(takeOwnership: true)
    for version in [OnionBrowserVersion.v2, .v3] {
      var h = Harness(version, deviation: harness)
      h.launch()
      h.run(until: 1)
      h.feed(Self.ok, at: 1)
      h.feed(Self.ok, at: 1)
      #expect(
        h.lines == [
          "AUTHENTICATE", "SETEVENTS STATUS_CLIENT", "GETINFO status/circuit-established",
        ])
      h.feed("250-status/circuit-established=0\r\n250 OK\r\n", at: 1)
      #expect(Array(h.lines.suffix(2)) == ["TAKEOWNERSHIP", "SETCONF DisableNetwork=0"])
      // After a RELOAD (which re-applies the harness's torrc), the network again.
      h.take(h.controller.networkChanged(at: 2), at: 2)
      h.feed(Self.ok, at: 2)
      h.feed(Self.ok, at: 2)
      #expect(Array(h.lines.suffix(2)) == ["SIGNAL NEWNYM", "SETCONF DisableNetwork=0"])
    }
    // 1.X: never TAKEOWNERSHIP (it reconnects while tor runs on); the network enabled.
    let h = Self.v1Authenticated(deviation: harness)
    #expect(h.lines == ["AUTHENTICATE", "SETCONF DisableNetwork=0", Self.poll1])
  }

  // MARK: - Row 2: stopping

  @Test func v1BackgroundBeforeFirstConnectExits_ADm_l319_334() {
    var h = Self.v1Authenticated()
    h.take(h.controller.background(at: 1), at: 1)
    #expect(h.exited)
    #expect(h.closes == [1])
    #expect(h.reports.contains(.exitApp(reason: "went to the background before tor connected")))
    #expect(h.lines == ["AUTHENTICATE", Self.poll1])  // nothing sent to tor
  }

  @Test func v1BackgroundAfterConnectOnlyClosesTheSocket_TCm_l192_199() {
    var h = Self.v1Connected(at: 1)
    let before = h.lines.count
    h.take(h.controller.background(at: 2), at: 2)
    #expect(!h.exited)
    #expect(h.closes == [2])
    #expect(h.lines.count == before)
    // The check loop is cancelled: no heartbeat while in the background.
    h.run(until: 60)
    #expect(h.lines.count == before)
    // Active again: a new connection 0.25 s later (TC.m l.163-167).
    h.take(h.controller.foreground(at: 70), at: 70)
    h.run(until: 70.25)
    #expect(h.connects.last == 70.25)
    #expect(h.lines.last == "AUTHENTICATE")
  }

  @Test func v1TerminateSendsNothing() {
    var h = Self.v1Connected()
    let before = h.lines.count
    h.take(h.controller.terminate(at: 3), at: 3)
    #expect(h.lines.count == before)
    #expect(h.closes == [3])
  }

  @Test func v2BackgroundShutsTorDown_OM_l376_392_AD2_l229_231() {
    var h = Self.tfSetUp(.v2)
    h.take(h.controller.background(at: 5), at: 5)
    #expect(h.lines.last == "SIGNAL SHUTDOWN")
    h.feed(Self.ok, at: 5.01)
    #expect(h.closes == [5.01])
    // The controller is dropped: the guard later sends nothing (OM l.358-359 on nil).
    h.run(until: 40)
    #expect(h.lines.last == "SIGNAL SHUTDOWN")
    #expect(h.reports.contains(.stalled(seconds: 15, toggled: false)))
  }

  /// 2.X's applicationWillTerminate does nothing to tor (it dies with the app); the model sent
  /// SIGNAL SHUTDOWN until Onion Browser's own code ran (docs/onion-browser-source.md).
  @Test func v2TerminateSendsNothing_AD2_l296_301() {
    var h = Self.tfSetUp(.v2)
    let before = h.lines.count
    h.take(h.controller.terminate(at: 6), at: 6)
    #expect(h.lines.count == before)
    #expect(h.closes == [6])
  }

  @Test func v3BackgroundLeavesTorAloneAndTerminateShutsItDown_AD3_l102_TM_l238_253() {
    var h = Self.tfSetUp(.v3)
    let before = h.lines.count
    h.take(h.controller.background(at: 5), at: 5)
    #expect(h.lines.count == before)
    #expect(h.closes.isEmpty)
    h.take(h.controller.terminate(at: 6), at: 6)
    #expect(h.lines.last == "SIGNAL SHUTDOWN")
  }

  // MARK: - Row 4: network change

  @Test func v1ReachableMeansHUPThenReconnectNoNewnym_TCm_l119_149_l92_106() {
    var h = Self.v1Connected(at: 1)
    h.take(h.controller.networkChanged(reachable: false, at: 2), at: 2)
    #expect(!h.lines.contains("SIGNAL HUP"))
    h.take(h.controller.networkChanged(reachable: true, at: 3), at: 3)
    #expect(h.times(of: "SIGNAL HUP") == [3])
    h.run(until: 4)
    #expect(h.connects.last == 4)  // 1.0 s after the HUP
    #expect(!h.lines.contains("SIGNAL NEWNYM"))
    #expect(h.lineEndings == ["\n"])  // ULINetSocket writeString "...\n"
  }

  @Test(arguments: [OnionBrowserVersion.v2, .v3])
  func tfSetConfThenReloadThenNewnymOnlyAfter250_OM_l95_108_TM_l72_87_TFm_l738_767(
    _ version: OnionBrowserVersion
  ) {
    var h = Self.tfSetUp(version)
    h.take(h.controller.networkChanged(at: 5), at: 5)
    #expect(
      h.lines.last
        == "SETCONF ClientPreferIPv6ORPort=\"auto\" ClientUseIPv4=\"1\" ClientUseIPv6=\"1\"")
    h.feed(Self.ok, at: 5.1)
    #expect(h.lines.last == "SIGNAL RELOAD")
    #expect(!h.lines.contains("SIGNAL NEWNYM"))
    h.feed(Self.ok, at: 5.2)
    #expect(h.lines.last == "SIGNAL NEWNYM")
    // A refused RELOAD: no NEWNYM.
    h.take(h.controller.networkChanged(at: 9), at: 9)
    h.feed(Self.ok, at: 9.1)
    h.feed("552 Unrecognized signal\r\n", at: 9.2)
    #expect(h.count("SIGNAL NEWNYM") == 1)
  }

  @Test func anEventBeforeReloadsAnswerCostsTheNewnym_TFm_l740_766() {
    var h = Self.tfSetUp(.v2)
    h.take(h.controller.networkChanged(at: 5), at: 5)
    h.feed(Self.ok, at: 5.1)
    #expect(h.lines.last == "SIGNAL RELOAD")
    h.feed(Self.event(50), at: 5.15)  // taken as RELOAD's answer: not 250, no NEWNYM
    h.feed(Self.ok, at: 5.2)
    #expect(!h.lines.contains("SIGNAL NEWNYM"))
  }

  // MARK: - Row 5: 2.X's stall guard (and none in 1.X and 3.X)

  @Test func v2GuardFires15To16SecondsAfterTheLastReportOnce_OM_l339_370_l445_447() {
    var h = Self.tfSetUp(.v2)
    h.feed(Self.event(5), at: 3.5)  // connectionAlive: timeout 18.5
    h.run(until: 18.99)
    #expect(!h.lines.contains("SETCONF DisableNetwork=1"))
    h.run(until: 19)  // the check at 19 s sees now > 18.5
    #expect(h.times(of: "SETCONF DisableNetwork=1") == [19])
    #expect(h.times(of: "SETCONF DisableNetwork=0") == [19])
    #expect(h.reports.contains(.stalled(seconds: 15, toggled: true)))
    h.run(until: 120)
    #expect(h.count("SETCONF DisableNetwork=1") == 1)  // stopConnectionGuard, l.366
  }

  @Test func v2GuardIsRearmedByEveryBootstrapEventEvenTheSame_OM_l313_314() {
    var h = Self.tfSetUp(.v2)
    for t in stride(from: 2.0, through: 42, by: 10) { h.feed(Self.event(5), at: t) }
    h.run(until: 57.5)  // the last event at 42: the check at 57 does not see now > 57
    #expect(!h.lines.contains("SETCONF DisableNetwork=1"))
    h.run(until: 58)
    #expect(h.times(of: "SETCONF DisableNetwork=1") == [58])
  }

  @Test func v2GuardIsNotStoppedBy100ButByCircuitEstablished_OM_l296_307_l323_325() {
    var h = Self.tfSetUp(.v2)
    h.feed(Self.event(100), at: 2)
    #expect(!h.ready)
    #expect(h.controller.nextDeadline != nil)
    h.run(until: 18)
    #expect(h.times(of: "SETCONF DisableNetwork=1") == [18])
    var c = Self.tfSetUp(.v2)
    c.feed(Self.event(100), at: 2)
    c.feed(Self.established, at: 2.1)
    #expect(c.ready)
    c.run(until: 60)
    #expect(!c.lines.contains("SETCONF DisableNetwork=1"))
  }

  @Test func v2GuardNeverTogglesWithATransport_OM_l353_360() {
    var h = Self.tfSetUp(.v2, bridges: true)
    h.run(until: 60)
    #expect(!h.lines.contains("SETCONF DisableNetwork=1"))
    #expect(h.reports.contains(.stalled(seconds: 15, toggled: false)))
  }

  @Test(arguments: [OnionBrowserVersion.v1, .v3])
  func noGuardOutside2X(_ version: OnionBrowserVersion) {
    var h = version == .v1 ? Self.v1Authenticated() : Self.tfSetUp(.v3)
    if version == .v1 {
      // tor answers every poll with the same phase for a minute.
      var time = 0.3
      while time < 60 {
        h.feed(Self.poll(5), at: time)
        time += 0.15
        h.run(until: time)
      }
    } else {
      h.run(until: 60)
    }
    #expect(!h.lines.contains("SETCONF DisableNetwork=1"))
    #expect(!h.reports.contains { if case .stalled = $0 { true } else { false } })
  }

  // MARK: - Row 6: 1.X's heartbeat

  @Test func v1HeartbeatEvery5sAndHUPAfter3sWithoutAnswer_TCm_l201_230_l344_383() {
    var h = Self.v1Connected(at: 1)
    h.run(until: 6)
    #expect(h.times(of: Self.heartbeat1) == [6])
    h.feed("250-orconn-status=$A~a CONNECTED\r\n250 OK\r\n", at: 6.1)
    h.run(until: 11.1)
    #expect(h.times(of: Self.heartbeat1) == [6, 11.1])
    // A reply without "orconn-status=" is ignored: HUP only from the 3 s timeout.
    h.feed("250 OK\r\n", at: 11.2)
    #expect(!h.lines.contains("SIGNAL HUP"))
    h.run(until: 14.1)
    #expect(h.times(of: "SIGNAL HUP") == [14.1])
    #expect(h.reports.contains(.replyTimeout(command: Self.heartbeat1, seconds: 3)))
  }

  @Test func v1OrconnStatusWithout250OKInTheSameReadHUPsAtOnce_TCm_l360_374() {
    var h = Self.v1Connected(at: 1)
    h.run(until: 6)
    h.feed("250-orconn-status=$A~a CONNECTED\r\n", at: 6.1)  // "250 OK" comes in the next read
    #expect(h.times(of: "SIGNAL HUP") == [6.1])
    h.feed("250 OK\r\n", at: 6.2)
    #expect(h.count("SIGNAL HUP") == 1)
  }

  // MARK: - Row 7: 1.X's lost connection and failed AUTHENTICATE

  @Test func v1ReconnectsAtOnceWhenTheConnectionDrops_TCm_l264_272() {
    var h = Self.v1Connected(at: 1)
    h.take(h.controller.connectionClosed(reason: "closed by tor", at: 2), at: 2)
    #expect(h.connects.last == 2)
    #expect(h.lines.last == "AUTHENTICATE")
    // With the harness's floor, a refused connect is retried 0.25 s later, not in a busy loop.
    var f = Self.v1Authenticated(deviation: OnionBrowserHarnessDeviation(reconnectFloor: 0.25))
    f.take(f.controller.connectionClosed(reason: "x", at: 0.5), at: 0.5)
    #expect(f.connects == [0.15, 0.5])
    f.take(f.controller.connectFailed(reason: "refused", at: 0.5), at: 0.5)
    #expect(f.connects == [0.15, 0.5])
    f.run(until: 0.75)
    #expect(f.connects == [0.15, 0.5, 0.75])
  }

  @Test func v1FailedAuthenticateExitsBeforeConnect_TCm_l313_317() {
    var h = Harness(.v1, authenticate: "AUTHENTICATE \"wrong\"")
    h.launch()
    h.tick(0.15)
    h.feed("515 Authentication failed\r\n", at: 0.2)
    #expect(h.exited)
    #expect(h.reports.contains(.exitApp(reason: "authentication failed before tor connected")))
  }

  @Test func v1FailedAuthenticateAfterConnectHUPs2Point5sLater_TCm_l299_312() {
    var h = Self.v1Connected(at: 1)
    h.take(h.controller.connectionClosed(reason: "x", at: 2), at: 2)
    h.feed("515 Authentication failed\r\n", at: 2.1)
    #expect(!h.exited)
    h.run(until: 4.59)
    #expect(!h.lines.contains("SIGNAL HUP"))
    h.run(until: 4.6)
    #expect(h.times(of: "SIGNAL HUP") == [4.6])
    h.run(until: 5.6)
    #expect(h.connects.last == 5.6)
  }

  // MARK: - Row 8: progress source and readiness

  @Test func v1PollsOnlyInTwoChainsAndIsReadyAt100_TCm_l279_290_l319_348() {
    var h = Self.v1Authenticated(at: 0.2)
    #expect(h.times(of: Self.poll1) == [0.2])
    h.run(until: 0.35)
    #expect(h.times(of: Self.poll1) == [0.2, 0.35])  // the second chain
    h.feed(Self.poll(5), at: 0.3)
    h.feed(Self.poll(10), at: 0.4)
    h.run(until: 0.55)
    // Each answer re-arms its own chain: polls at 0.45 and 0.55.
    #expect(h.times(of: Self.poll1).count == 4)
    #expect(!h.lines.contains { $0.hasPrefix("SETEVENTS") })
    #expect(!h.ready)
    h.feed(Self.poll(100), at: 0.6)
    #expect(h.ready)
  }

  @Test func v2IsReadyAtCircuitEstablishedNotAt100_OM_l296_307() {
    var h = Self.tfSetUp(.v2)
    #expect(
      h.lines == ["AUTHENTICATE", "SETEVENTS STATUS_CLIENT", "GETINFO status/circuit-established"])
    h.feed(Self.event(100), at: 2)
    #expect(!h.ready)
    h.feed(Self.established, at: 2.1)
    #expect(h.ready)
    #expect(!h.lines.contains { $0.lowercased().contains("bootstrap-phase") })  // no polling
  }

  @Test func v2AlreadyEstablishedAnswersReady_TFm_l351_361() {
    var h = Harness(.v2)
    h.launch()
    h.run(until: 1)
    h.feed(Self.ok, at: 1)
    h.feed(Self.ok, at: 1)
    h.feed("250-status/circuit-established=1\r\n250 OK\r\n", at: 1)
    #expect(h.ready)
  }

  @Test func v3IsReadyWithCircuitAndSocksListener_TM_l176_202() {
    var h = Self.tfSetUp(.v3)
    #expect(h.connects == [0.65])  // TM l.114
    h.feed(Self.event(100), at: 2)
    h.feed(Self.established, at: 2.1)
    #expect(!h.ready)
    #expect(h.lines.last == "GETINFO net/listeners/socks")
    h.feed("250-net/listeners/socks=\"127.0.0.1:39050\"\r\n250 OK\r\n", at: 2.2)
    #expect(h.ready)
    #expect(h.reports.contains(.socksListener("127.0.0.1:39050")))
  }

  @Test func v3WithoutASocksListenerStopsTor_TM_l185_193() {
    var h = Self.tfSetUp(.v3)
    h.feed(Self.established, at: 2.1)
    h.feed("250-net/listeners/socks=\r\n250 OK\r\n", at: 2.2)
    #expect(!h.ready)
    #expect(h.lines.last == "SIGNAL SHUTDOWN")
    #expect(h.reports.contains(.failed(reason: "No SOCKS port")))
  }

  @Test func v3FailedAuthenticateStopsTor_TM_l140_147() {
    var h = Harness(.v3)
    h.launch()
    h.run(until: 0.65)
    h.feed("515 Authentication failed\r\n", at: 0.7)
    #expect(h.lines == ["AUTHENTICATE", "SIGNAL SHUTDOWN"])
    #expect(h.reports.contains { if case .failed = $0 { true } else { false } })
  }

  @Test func anEventBeforeTheGetinfoAnswerFailsIt_TFm_l531_552() {
    // Tor.framework hands the next message, whatever it is, to the newest command observer: an
    // event arriving before GETINFO status/circuit-established's answer fails it, and the
    // circuit-established observer is removed (l.355-357). 2.X then never sees the circuit.
    var h = Harness(.v2)
    h.launch()
    h.run(until: 1)
    h.feed(Self.ok, at: 1)
    h.feed(Self.ok, at: 1)
    h.feed(Self.event(50), at: 1.01)
    h.feed("250-status/circuit-established=0\r\n250 OK\r\n", at: 1.02)
    h.feed(Self.established, at: 3)
    #expect(!h.ready)
  }

  // MARK: - Row 9: bridges changed while tor runs

  @Test func v2ResetsThenSetsTheTransportEachAfterSuccess_OM_l191_215() {
    var h = Self.tfSetUp(.v2)
    let conf = [("Bridge", "obfs4 127.0.0.1:9 FP cert=x iat-mode=0"), ("UseBridges", "1")]
    if case .v2(var c) = h.controller.core {
      h.take(c.reconfigure(transport: conf, at: 5), at: 5)
      h.controller.core = .v2(c)
    }
    for _ in 0..<3 { h.feed(Self.ok, at: 5.1) }
    #expect(
      Array(h.lines.suffix(4)) == [
        "RESETCONF UseBridges", "RESETCONF ClientTransportPlugin", "RESETCONF Bridge",
        "SETCONF Bridge=\"obfs4 127.0.0.1:9 FP cert=x iat-mode=0\" UseBridges=\"1\"",
      ])
    // A refused reset (552: not an answer resetConfForKey's observer takes, TF.m l.448-451)
    // ends the chain.
    var f = Self.tfSetUp(.v2)
    if case .v2(var c) = f.controller.core {
      f.take(c.reconfigure(transport: conf, at: 5), at: 5)
      f.controller.core = .v2(c)
    }
    f.feed("552 nope\r\n", at: 5.1)
    #expect(f.lines.last == "RESETCONF UseBridges")
  }

  @Test func v3ResetsNodeSettingsTooWhateverTheAnswers_TM_l207_236() {
    var h = Self.tfSetUp(.v3)
    if case .v3(var c) = h.controller.core {
      h.take(c.reconfigure(transport: [("UseBridges", "0")], at: 5), at: 5)
      h.controller.core = .v3(c)
    }
    // A 515 fails the reset (success false); 3.X goes on to the next key anyway.
    for _ in 0..<7 { h.feed("515 nope\r\n", at: 5.1) }
    #expect(
      Array(h.lines.suffix(8)) == OnionBrowser3Controller.resetKeys.map { "RESETCONF " + $0 }
        + ["SETCONF UseBridges=\"0\""])
  }
}
