import Testing

@testable import TorControl

/// Onion Browser's controller against synthetic tor answers and synthetic times.
@Suite struct OnionBrowserControllerTests {
  /// Drives a controller and keeps everything it sent and reported, with times.
  struct Harness {
    var controller: OnionBrowserController
    var sent: [(time: Double, line: String)] = []
    var reports: [OnionBrowserReport] = []
    var closed = false

    init(_ configuration: OnionBrowserController.Configuration = .init()) {
      controller = OnionBrowserController(configuration: configuration)
    }

    mutating func take(_ output: OnionBrowserOutput, at time: Double) {
      sent += output.lines.map { (time, $0) }
      reports += output.reports
      closed = closed || output.close
    }

    mutating func start(at time: Double = 0) { take(controller.start(at: time), at: time) }

    mutating func feed(_ text: String, at time: Double) {
      take(controller.receive(Array(text.utf8), at: time), at: time)
    }

    mutating func tick(_ time: Double) { take(controller.tick(at: time), at: time) }

    /// Ticks at every deadline up to `end`, answering nothing.
    mutating func run(until end: Double) {
      for _ in 0..<10_000 {
        guard let next = controller.nextDeadline, next <= end else { return }
        tick(next)
      }
    }

    /// Authenticated and set up at `time`: answers AUTHENTICATE and the setup commands OK.
    mutating func setUp(at time: Double = 0) {
      start(at: time)
      for _ in 0..<4 where controller.stage == .settingUp { feed("250 OK\r\n", at: time) }
    }

    var lines: [String] { sent.map(\.line) }
    func times(of line: String) -> [Double] { sent.filter { $0.line == line }.map(\.time) }
    var commandReports: [String] {
      reports.compactMap {
        if case .command(let line) = $0 { return line }
        return nil
      }
    }

    static func phase(_ progress: Int, _ tag: String, _ summary: String, warn: Bool = false)
      -> String
    {
      "\(warn ? "WARN" : "NOTICE") BOOTSTRAP PROGRESS=\(progress) TAG=\(tag) SUMMARY=\"\(summary)\""
    }

    static func pollAnswer(_ progress: Int, _ tag: String = "conn", _ summary: String = "x")
      -> String
    {
      "250-status/bootstrap-phase=\(phase(progress, tag, summary))\r\n250 OK\r\n"
    }
  }

  static func approx(_ a: Double?, _ b: Double) -> Bool { a.map { abs($0 - b) < 1e-9 } ?? false }

  static let poll = OnionBrowserController.pollCommand
  static let heartbeat = OnionBrowserController.heartbeatCommand

  @Test func setsUpInOrderWaitingForEachAnswer() {
    var h = Harness(.init(authenticate: "AUTHENTICATE 0A0B", takeOwnership: true))
    h.start(at: 0)
    #expect(h.lines == ["AUTHENTICATE 0A0B"])
    #expect(h.commandReports == ["AUTHENTICATE <secret>"])
    h.feed("250 OK\r\n", at: 0.01)
    #expect(h.lines.last == "TAKEOWNERSHIP")
    h.feed("250 OK\r\n", at: 0.02)
    #expect(h.lines.last == "SETEVENTS STATUS_CLIENT")
    h.feed("250 OK\r\n", at: 0.03)
    #expect(h.lines.last == "SETCONF DisableNetwork=0")
    #expect(h.controller.stage == .settingUp)
    h.feed("250 OK\r\n", at: 0.04)
    #expect(h.controller.stage == .running)
    // 1.X polls at once after setting up.
    #expect(h.sent.last! == (0.04, Self.poll))
    #expect(h.reports.contains(.authenticated))
    #expect(
      h.commandReports == [
        "AUTHENTICATE <secret>", "TAKEOWNERSHIP", "SETEVENTS STATUS_CLIENT",
        "SETCONF DisableNetwork=0",
      ])
  }

  @Test func withoutTakeOwnershipSkipsIt() {
    var h = Harness()
    h.setUp()
    #expect(
      h.lines == ["AUTHENTICATE", "SETEVENTS STATUS_CLIENT", "SETCONF DisableNetwork=0", Self.poll])
  }

  @Test func authenticationFailureClosesWithAnError() {
    var h = Harness(.init(authenticate: "AUTHENTICATE \"wrong\""))
    h.start()
    h.feed(
      "515 Authentication failed: Password did not match HashedControlPassword value\r\n", at: 1)
    #expect(h.closed)
    #expect(h.controller.stage == .closed)
    #expect(
      h.reports.contains(
        .replyError(
          command: "AUTHENTICATE <secret>", code: 515,
          text: "Authentication failed: Password did not match HashedControlPassword value")))
    #expect(h.reports.last == .closed(reason: "authentication failed"))
    #expect(h.lines == ["AUTHENTICATE \"wrong\""])
  }

  @Test func pollsEveryPointOneFiveSecondsAfterEachAnswer() {
    var h = Harness()
    h.setUp(at: 0)
    #expect(h.times(of: Self.poll) == [0])
    // Nothing more while the poll is outstanding.
    h.tick(0.5)
    #expect(h.times(of: Self.poll) == [0])
    h.feed(Harness.pollAnswer(5), at: 0.5)
    #expect(Self.approx(h.controller.nextDeadline, 0.65))
    h.tick(0.649)
    #expect(h.times(of: Self.poll) == [0])
    h.tick(0.651)
    #expect(h.times(of: Self.poll) == [0, 0.651])
    h.feed(Harness.pollAnswer(10), at: 0.75)
    #expect(Self.approx(h.controller.nextDeadline, 0.9))
    h.tick(0.899)
    #expect(h.times(of: Self.poll).count == 2)
    h.tick(0.901)
    #expect(h.times(of: Self.poll) == [0, 0.651, 0.901])
  }

  @Test func reportsEachChangeOnceAndStopsPollingAtOneHundred() {
    var h = Harness()
    h.setUp()
    var time = 0.0
    for progress in [5, 5, 5, 10, 10, 100] {
      h.feed(Harness.pollAnswer(progress, "t\(progress)", "s\(progress)"), at: time)
      time += 0.15
      h.tick(time)
    }
    let phases: [Int] = h.reports.compactMap {
      if case .bootstrap(let phase) = $0 { return phase.progress }
      return nil
    }
    #expect(phases == [5, 10, 100])
    #expect(h.controller.isBootstrapped)
    #expect(h.controller.phase == BootstrapPhase(progress: 100, tag: "t100", summary: "s100"))
    let polls = h.times(of: Self.poll).count
    h.run(until: 4.9)
    #expect(h.times(of: Self.poll).count == polls)
    #expect(!h.lines.contains(Self.heartbeat))
    // Polls are not logged.
    #expect(!h.commandReports.contains(Self.poll))
  }

  @Test func statusClientEventsReportProgressAndEndPolling() {
    var h = Harness()
    h.setUp()
    h.feed("650 STATUS_CLIENT \(Harness.phase(50, "loading_descriptors", "Loading"))\r\n", at: 0.1)
    #expect(
      h.reports.last
        == .bootstrap(.init(progress: 50, tag: "loading_descriptors", summary: "Loading")))
    h.feed("650 STATUS_CLIENT \(Harness.phase(100, "done", "Done"))\r\n", at: 0.2)
    #expect(h.controller.isBootstrapped)
    // The outstanding poll's answer comes; polling has ended, the heartbeat starts 5 s on.
    h.feed(Harness.pollAnswer(100, "done", "Done"), at: 0.25)
    h.run(until: 5.1)
    #expect(h.times(of: Self.poll) == [0])
    #expect(h.times(of: Self.heartbeat) == [])
    #expect(Self.approx(h.controller.nextDeadline, 5.2))
  }

  @Test func repliesInterleavedWithAsyncEvents() {
    var h = Harness()
    h.start()
    // An event before the AUTHENTICATE answer must not be taken for the answer.
    h.feed("650 STATUS_CLIENT \(Harness.phase(5, "conn", "Connecting"))\r\n", at: 0.01)
    #expect(h.controller.stage == .settingUp)
    #expect(h.lines == ["AUTHENTICATE"])
    h.feed(
      "250 OK\r\n650 STATUS_CLIENT \(Harness.phase(10, "conn_done", "Connected"))\r\n", at: 0.02)
    #expect(h.lines.last == "SETEVENTS STATUS_CLIENT")
    h.feed("250 OK\r\n250 OK\r\n", at: 0.03)
    #expect(h.lines.last == Self.poll)
    // Event lines between the lines of a multi-line answer are not possible in tor, but an
    // event between the answer and the next command is.
    h.feed(
      "650 STATUS_CLIENT \(Harness.phase(14, "handshake", "Handshaking"))\r\n"
        + Harness.pollAnswer(14, "handshake", "Handshaking")
        + "650 STATUS_CLIENT \(Harness.phase(15, "handshake_done", "Done hs"))\r\n", at: 0.04)
    let phases: [Int] = h.reports.compactMap {
      if case .bootstrap(let phase) = $0 { return phase.progress }
      return nil
    }
    #expect(phases == [5, 10, 14, 15])
    #expect(h.controller.nextDeadline == 0.04 + 0.15)
  }

  @Test func partialLinesAcrossReads() {
    var h = Harness()
    h.setUp()
    let bytes = Array(
      (Harness.pollAnswer(45, "requesting_descriptors", "Asking for relay descriptors")
        + "650 STATUS_CLIENT WARN BOOTSTRAP PROGRESS=45 TAG=requesting_descriptors "
        + "SUMMARY=\"Asking for relay descriptors\" WARNING=\"Connection refused\" "
        + "REASON=CONNECTREFUSED COUNT=3 RECOMMENDATION=ignore HOSTID=\"?\" "
        + "HOSTADDR=\"127.0.0.1:1\"\r\n").utf8)
    for (index, byte) in bytes.enumerated() {
      h.take(h.controller.receive([byte], at: 0.01 + Double(index) * 0.0001), at: 0.01)
    }
    #expect(
      h.reports.contains(
        .bootstrap(
          .init(
            progress: 45, tag: "requesting_descriptors",
            summary: "Asking for relay descriptors"))))
    let problems: [BootstrapWarning] = h.reports.compactMap {
      if case .problem(let problem) = $0 { return problem }
      return nil
    }
    #expect(problems.count == 1)
    #expect(problems.first?.reason == "CONNECTREFUSED")
    #expect(problems.first?.count == 3)
    #expect(problems.first?.warning == "Connection refused")
    #expect(problems.first?.hostAddress == "127.0.0.1:1")
  }

  @Test func problemsAreReportedOnceEachThoughPollsRepeatThem() {
    var h = Harness()
    h.setUp()
    func warning(count: Int) -> String {
      "WARN BOOTSTRAP PROGRESS=5 TAG=conn SUMMARY=\"Connecting to a relay\" "
        + "WARNING=\"Connection timed out\" REASON=TIMEOUT COUNT=\(count) RECOMMENDATION=ignore "
        + "HOSTID=\"AAAA\" HOSTADDR=\"127.0.0.1:1\""
    }
    let warn = warning(count: 1)
    h.feed("650 STATUS_CLIENT \(warn)\r\n", at: 0.1)
    for step in 1...5 {
      h.feed("250-status/bootstrap-phase=\(warn)\r\n250 OK\r\n", at: 0.1 + Double(step) * 0.15)
      h.tick(0.1 + Double(step) * 0.15 + 0.15)
    }
    h.feed(
      "650 STATUS_CLIENT \(warning(count: 2))\r\n", at: 2)
    let counts: [Int] = h.reports.compactMap {
      if case .problem(let problem) = $0 { return problem.count }
      return nil
    }
    #expect(counts == [1, 2])
  }

  /// Reaches 100 % at `time` and returns the harness.
  static func bootstrapped(
    at time: Double = 1, _ configuration: OnionBrowserController.Configuration = .init()
  ) -> Harness {
    var h = Harness(configuration)
    h.setUp(at: 0)
    h.feed(Harness.pollAnswer(100, "done", "Done"), at: time)
    return h
  }

  @Test func heartbeatEveryFiveSecondsAfterEachGoodAnswer() {
    var h = Self.bootstrapped(at: 1)
    h.run(until: 5.999)
    #expect(h.times(of: Self.heartbeat) == [])
    h.tick(6)
    #expect(h.times(of: Self.heartbeat) == [6])
    h.feed("250+orconn-status=\r\n$AAAA~guard CONNECTED\r\n.\r\n250 OK\r\n", at: 6.25)
    h.run(until: 11.24)
    #expect(h.times(of: Self.heartbeat) == [6])
    h.tick(11.25)
    #expect(h.times(of: Self.heartbeat) == [6, 11.25])
    // Heartbeats are not logged.
    #expect(!h.commandReports.contains(Self.heartbeat))
    #expect(!h.lines.contains("SIGNAL HUP"))
  }

  @Test func hupExactlyThreeSecondsAfterAnUnansweredHeartbeat() {
    var h = Self.bootstrapped(at: 1)
    h.tick(6)
    #expect(h.controller.nextDeadline == 9)
    h.tick(8.999)
    #expect(!h.lines.contains("SIGNAL HUP"))
    h.tick(9)
    #expect(h.times(of: "SIGNAL HUP") == [9])
    #expect(h.reports.contains(.replyTimeout(command: Self.heartbeat, seconds: 3)))
    #expect(h.commandReports.last == "SIGNAL HUP")
    // The next heartbeat 1.15 s later; the late answer to the first is dropped.
    h.feed("250-orconn-status=\r\n250 OK\r\n", at: 9.5)
    #expect(h.lines.last == "SIGNAL HUP")
    // A HUP re-applies a torrc's DisableNetwork 1: once tor has answered it, the network is
    // enabled again.
    h.feed("250 OK\r\n", at: 9.6)
    #expect(h.sent.last! == (9.6, "SETCONF DisableNetwork=0"))
    h.feed("250 OK\r\n", at: 9.7)
    #expect(Self.approx(h.controller.nextDeadline, 10.15))
    h.run(until: 10.149)
    #expect(h.times(of: Self.heartbeat) == [6])
    h.tick(10.151)
    #expect(h.times(of: Self.heartbeat) == [6, 10.151])
    h.feed("250-orconn-status=\r\n250 OK\r\n", at: 10.25)
    h.run(until: 15.25)
    #expect(h.times(of: Self.heartbeat) == [6, 10.151, 15.25])
    #expect(h.times(of: "SIGNAL HUP") == [9])
  }

  @Test func noHUPWhenTheAnswerComesAtTwoPointNineSeconds() {
    var h = Self.bootstrapped(at: 1)
    h.tick(6)
    h.feed("250-orconn-status=\r\n250 OK\r\n", at: 8.9)
    h.run(until: 13.89)
    #expect(!h.lines.contains("SIGNAL HUP"))
    #expect(h.times(of: Self.heartbeat) == [6])
    #expect(Self.approx(h.controller.nextDeadline, 13.9))
  }

  @Test func anAnswerReadAfterTheDeadlineIsLate() {
    var h = Self.bootstrapped(at: 1)
    h.tick(6)
    // The edge was slow to tick: the answer is read at 9.05, past the 3 s deadline.
    h.feed("250-orconn-status=\r\n250 OK\r\n", at: 9.05)
    #expect(h.times(of: "SIGNAL HUP") == [9.05])
  }

  @Test func errorAnswerToAHeartbeatMeansHUP() {
    var h = Self.bootstrapped(at: 1)
    h.tick(6)
    h.feed("551 Internal error\r\n", at: 6.1)
    #expect(
      h.reports.contains(.replyError(command: Self.heartbeat, code: 551, text: "Internal error")))
    #expect(h.times(of: "SIGNAL HUP") == [6.1])
  }

  @Test func anErrorAnswerIsReported() {
    var h = Harness()
    h.start()
    h.feed("250 OK\r\n", at: 0)
    h.feed("552 Unrecognized event \"STATUS_CLIENT\"\r\n", at: 0.1)
    #expect(
      h.reports.contains(
        .replyError(
          command: "SETEVENTS STATUS_CLIENT", code: 552,
          text: "Unrecognized event \"STATUS_CLIENT\"")))
    // Carries on: tor may bootstrap anyway and polls still work.
    #expect(h.lines.last == "SETCONF DisableNetwork=0")
    h.feed("250 OK\r\n", at: 0.2)
    h.feed("552 Unrecognized key \"status/bootstrap-phase\"\r\n", at: 0.3)
    #expect(
      h.reports.last
        == .replyError(
          command: Self.poll, code: 552, text: "Unrecognized key \"status/bootstrap-phase\""))
    h.tick(0.45)
    #expect(h.times(of: Self.poll) == [0.2, 0.45])
  }

  @Test func networkChangeSendsReloadThenNewnym() {
    var h = Harness()
    h.start()
    h.take(h.controller.networkChanged(at: 0.01), at: 0.01)
    #expect(!h.lines.contains("SIGNAL RELOAD"))
    h.setUp()
    h.take(h.controller.networkChanged(at: 1), at: 1)
    #expect(Array(h.lines.suffix(2)) == ["SIGNAL RELOAD", "SIGNAL NEWNYM"])
    #expect(Array(h.commandReports.suffix(2)) == ["SIGNAL RELOAD", "SIGNAL NEWNYM"])
    // The poll sent before them gets its answer first; theirs follow in order. Only after
    // RELOAD's answer is the network enabled again (tor reloads after answering).
    h.feed(Harness.pollAnswer(20), at: 1.25)
    #expect(h.lines.last == "SIGNAL NEWNYM")
    h.feed("250 OK\r\n", at: 1.3)
    #expect(h.lines.last == "SETCONF DisableNetwork=0")
    h.feed("250 OK\r\n250 OK\r\n", at: 1.3)
    #expect(!h.reports.contains { if case .replyError = $0 { true } else { false } })
    #expect(h.reports.contains(.bootstrap(.init(progress: 20, tag: "conn", summary: "x"))))
    #expect(Self.approx(h.controller.nextDeadline, 1.4))
  }

  @Test func onionBrowsersOwnSequenceWithoutReenabling() {
    var h = Harness(.init(reenableNetworkAfterReload: false))
    h.setUp()
    h.take(h.controller.networkChanged(at: 1), at: 1)
    #expect(Array(h.lines.suffix(2)) == ["SIGNAL RELOAD", "SIGNAL NEWNYM"])
    h.feed("250 OK\r\n", at: 1.1)
    #expect(h.lines.last == "SIGNAL NEWNYM")
    var b = Self.bootstrapped(at: 1, .init(reenableNetworkAfterReload: false))
    b.run(until: 9)
    b.feed("250 OK\r\n", at: 9.5)
    #expect(b.lines.last == "SIGNAL HUP")
  }

  @Test func stallTogglesDisableNetworkAtFifteenSecondsOnce() {
    var h = Harness()
    h.setUp(at: 0)
    // tor answers every poll with the same phase: no news.
    var time = 0.0
    for _ in 0..<200 {
      h.feed(Harness.pollAnswer(5), at: time)
      time += 0.15
      if time >= 14.95 { break }
      h.tick(time)
    }
    #expect(!h.lines.contains("SETCONF DisableNetwork=1"))
    h.tick(15)
    let toggles = h.sent.filter { $0.line.hasPrefix("SETCONF DisableNetwork=") }
    #expect(
      toggles.map(\.line) == [
        "SETCONF DisableNetwork=0", "SETCONF DisableNetwork=1", "SETCONF DisableNetwork=0",
      ])
    #expect(toggles.last!.time == 15)
    #expect(h.reports.contains(.stalled(seconds: 15, toggled: true)))
    // No repeat: OnionManager stops its guard after the first expiry.
    h.run(until: 60)
    #expect(h.sent.filter { $0.line == "SETCONF DisableNetwork=1" }.count == 1)
  }

  @Test func stallGuardCountsFromTheLastReport() {
    var h = Harness()
    h.setUp(at: 0)
    h.feed(Harness.pollAnswer(5), at: 10)
    h.run(until: 24.99)
    #expect(!h.lines.contains("SETCONF DisableNetwork=1"))
    h.tick(25)
    #expect(h.times(of: "SETCONF DisableNetwork=1") == [25])
  }

  @Test func neverTogglesWithBridges() {
    var h = Harness(.init(bridgesConfigured: true))
    h.setUp(at: 0)
    h.run(until: 100)
    #expect(!h.lines.contains("SETCONF DisableNetwork=1"))
    #expect(h.reports.contains(.stalled(seconds: 15, toggled: false)))
  }

  @Test func noToggleOnceBootstrappedOrCircuitEstablished() {
    var h = Self.bootstrapped(at: 1)
    h.run(until: 30)
    #expect(!h.lines.contains("SETCONF DisableNetwork=1"))
    var c = Harness()
    c.setUp(at: 0)
    c.feed("650 STATUS_CLIENT NOTICE CIRCUIT_ESTABLISHED\r\n", at: 1)
    #expect(c.reports.contains(.circuitEstablished))
    c.run(until: 30)
    #expect(!c.lines.contains("SETCONF DisableNetwork=1"))
  }

  @Test func stopDisablesTheNetworkAndCloses() {
    var h = Harness()
    h.setUp()
    h.take(h.controller.stop(at: 1), at: 1)
    #expect(h.lines.last == "SETCONF DisableNetwork=1")
    #expect(h.closed)
    #expect(h.reports.last == .closed(reason: "stopped"))
    // Nothing after closing.
    h.feed(Harness.pollAnswer(100), at: 2)
    h.run(until: 100)
    #expect(h.lines.last == "SETCONF DisableNetwork=1")
    // Before authentication there is nothing to disable.
    var early = Harness()
    early.start()
    early.take(early.controller.stop(at: 0.1), at: 0.1)
    #expect(early.lines == ["AUTHENTICATE"])
    #expect(early.closed)
  }

  @Test func garbageClosesWithTheOffset() {
    var h = Harness()
    h.start()
    h.feed("250 OK\r\nHTTP/1.0 400 Bad\r\n", at: 0.1)
    #expect(h.closed)
    guard case .closed(let reason) = h.reports.last else {
      Issue.record("not closed")
      return
    }
    #expect(reason.contains("byte 8"))
  }

  @Test func parsesBootstrapLines() {
    let poll = OnionBrowserBootstrapStatus(
      line:
        #"status/bootstrap-phase=NOTICE BOOTSTRAP PROGRESS=45 TAG=loading_descriptors SUMMARY="Loading relay descriptors""#
    )
    #expect(
      poll
        == .init(
          phase: .init(
            progress: 45, tag: "loading_descriptors", summary: "Loading relay descriptors")))
    #expect(OnionBrowserBootstrapStatus(line: "STATUS_CLIENT NOTICE CIRCUIT_ESTABLISHED") == nil)
    #expect(OnionBrowserBootstrapStatus(line: "orconn-status=") == nil)
    #expect(OnionBrowserBootstrapStatus(line: "STATUS_CLIENT NOTICE BOOTSTRAP TAG=x") == nil)
    #expect(OnionBrowserBootstrapStatus(line: "STATUS_CLIENT NOTICE BOOTSTRAP PROGRESS=x") == nil)
    let escaped = OnionBrowserBootstrapStatus(
      line: #"STATUS_CLIENT NOTICE BOOTSTRAP PROGRESS=1 TAG=a SUMMARY="say \"hi\"""#)
    #expect(escaped?.phase.summary == "say \"hi\"")
  }
}

@Suite struct MockOwnershipTests {
  /// Tor.framework's controller sends TAKEOWNERSHIP; the mock answers it as tor does.
  @Test func mockAcceptsTakeOwnership() {
    var session = ControlSession(authentication: .none) { [UInt8](repeating: 0, count: 32) }
    var context = ControlContext()
    let output = session.receive(
      Array("AUTHENTICATE\r\nTAKEOWNERSHIP\r\nDROPOWNERSHIP\r\n".utf8), context: &context)
    #expect(String(decoding: output.bytes, as: UTF8.self) == "250 OK\r\n250 OK\r\n250 OK\r\n")
  }
}
