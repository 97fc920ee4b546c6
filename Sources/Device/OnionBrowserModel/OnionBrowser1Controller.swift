import TorControl

/// Onion Browser 1.X's control-port client (OnionBrowser/TorController.m @6ec0fdfc, "TC.m"
/// below, and AppDelegate.m's lifecycle calls into it) as a pure state machine.
///
/// 1.X reads its socket a chunk at a time and judges each chunk as one message by substring
/// (TC.m l.274-391): a chunk starting "250" authenticates; one containing
/// "-status/bootstrap-phase=" is a poll answer; one containing "orconn-status=" is a heartbeat
/// answer, good only if the same chunk holds "250 OK"; anything else is ignored. Its timers are
/// NSTimers held in two variables: assigning a new one to `_torCheckLoopTimer` does not cancel the
/// old one, so after authenticating two poll chains run (l.285 and l.286-290); `invalidate`
/// cancels only the one the variable holds. This type keeps both quirks.
public struct OnionBrowser1Controller: Sendable {
  enum TimerAction: Hashable, Sendable {
    /// activateTorCheckLoop (TC.m l.173-190): a new control connection.
    case activate
    /// checkTor (l.201-218): a poll before the first 100 %, a heartbeat after.
    case checkTor
    /// hupTor (l.92-106).
    case hup
    /// checkTorStatusTimeout (l.220-230): the heartbeat's 3 s ran out.
    case statusTimeout
  }

  struct Timer: Hashable, Sendable {
    let id: Int
    let at: Double
    let action: TimerAction
  }

  public static let pollCommand = "getinfo status/bootstrap-phase"
  public static let heartbeatCommand = "getinfo orconn-status"

  public let authenticate: String
  public let deviation: OnionBrowserHarnessDeviation
  public let timings: OnionBrowserTimings
  /// didFirstConnect: PROGRESS=100 seen once (TC.m l.329-341).
  public private(set) var didFirstConnect = false
  public private(set) var phase: BootstrapPhase?
  public private(set) var lastProblem: BootstrapWarning?
  /// `_mSocket` is set (connecting or connected).
  public private(set) var socketOpen = false
  public private(set) var authenticated = false
  public private(set) var exited = false
  private var timers: [Timer] = []
  private var nextID = 0
  /// What `_torCheckLoopTimer` and `_torStatusTimeoutTimer` hold.
  private var checkLoopTimer: Int?
  private var statusTimeoutTimer: Int?
  private var lastConnectAt = -Double.infinity

  public init(
    authenticate: String, deviation: OnionBrowserHarnessDeviation,
    timings: OnionBrowserTimings = OnionBrowserTimings()
  ) {
    self.authenticate = authenticate
    self.deviation = deviation
    self.timings = timings
  }

  // MARK: - Inputs

  /// startTor (TC.m l.68-90, called by AppDelegate.m afterFirstRun l.196-197): tor starts in
  /// process, the first control connection 0.15 s later.
  public mutating func launch(at now: Double) -> OnionBrowserOutput {
    var out = output()
    guard !exited else { return out }
    invalidateCheckLoop()
    invalidateStatusTimeout()
    checkLoopTimer = schedule(.activate, at: now + timings.firstCheck)
    fire(at: now, into: &out)
    return out
  }

  /// netsocketConnected (TC.m l.249-261): AUTHENTICATE.
  public mutating func connected(at now: Double) -> OnionBrowserOutput {
    var out = output()
    guard !exited, socketOpen else { return out }
    authenticated = false
    write(authenticate, logged: redacted(authenticate), into: &out)
    return out
  }

  /// The connection could not be made: ULINetSocket reports it as a disconnect.
  public mutating func connectFailed(reason: String, at now: Double) -> OnionBrowserOutput {
    connectionClosed(reason: reason, at: now)
  }

  /// netsocketDisconnected (TC.m l.264-272): disableTorCheckLoop, then activateTorCheckLoop at
  /// once (the harness: not sooner than `reconnectFloor` after the last attempt).
  public mutating func connectionClosed(reason: String, at now: Double) -> OnionBrowserOutput {
    var out = output()
    guard !exited, socketOpen else { return out }
    out.reports.append(.closed(reason: reason))
    disableCheckLoop(into: &out, closing: false)
    let at = max(now, lastConnectAt + deviation.reconnectFloor)
    if at <= now {
      activate(at: now, into: &out)
    } else {
      checkLoopTimer = schedule(.activate, at: at)
    }
    return out
  }

  /// One chunk as read (TC.m l.274-391).
  public mutating func receive(_ bytes: some Sequence<UInt8>, at now: Double) -> OnionBrowserOutput
  {
    var out = output()
    guard !exited else { return out }
    fire(at: now, into: &out)
    guard socketOpen else { return out }
    let message = String(decoding: Array(bytes), as: UTF8.self)
    if !authenticated {
      authenticationAnswer(message, at: now, into: &out)
    } else if message.contains("-status/bootstrap-phase=") {
      bootstrapAnswer(message, at: now, into: &out)
    } else if message.contains("orconn-status=") {
      // l.360-385: an answer without "250 OK" in the same read means tor is unwell.
      invalidateStatusTimeout()
      if !message.contains("250 OK") {
        out.reports.append(
          .replyError(command: Self.heartbeatCommand, code: 0, text: "orconn-status: NOT OK"))
        hup(at: now, into: &out)
      } else {
        checkLoopTimer = schedule(.checkTor, at: now + timings.heartbeatInterval)
      }
    }
    return out
  }

  public mutating func tick(at now: Double) -> OnionBrowserOutput {
    var out = output()
    fire(at: now, into: &out)
    return out
  }

  /// reachabilityChanged (TC.m l.119-149): only when the network is reachable; 1.X may rewrite
  /// its torrc's ClientUseIPv4/IPv6 lines first (when the IPv6 status changed; not modelled:
  /// the harness's device never changes IP stack), then hupTor. No NEWNYM.
  public mutating func networkChanged(reachable: Bool, at now: Double) -> OnionBrowserOutput {
    var out = output()
    guard !exited, reachable else { return out }
    hup(at: now, into: &out)
    return out
  }

  /// AppDelegate.m applicationWillResignActive (l.316) and applicationDidEnterBackground
  /// (l.319-334): the control connection closes; before the first 100 % the app exits.
  public mutating func background(at now: Double) -> OnionBrowserOutput {
    var out = output()
    guard !exited else { return out }
    disableCheckLoop(into: &out, closing: true)
    if !didFirstConnect {
      exited = true
      out.exitApp = true
      out.reports.append(.exitApp(reason: "went to the background before tor connected"))
    }
    return out
  }

  /// AppDelegate.m applicationDidBecomeActive (l.336-346) -> appDidBecomeActive (TC.m
  /// l.156-168): a HUP written to a socket that is gone (nothing), then a new connection 0.25 s
  /// later.
  public mutating func foreground(at now: Double) -> OnionBrowserOutput {
    let out = output()
    guard !exited else { return out }
    checkLoopTimer = schedule(.activate, at: now + timings.reconnectWhenActive)
    return out
  }

  /// The app ends: its process (and the tor in it) goes; 1.X sends nothing.
  public mutating func terminate(at now: Double) -> OnionBrowserOutput {
    var out = output()
    guard !exited else { return out }
    exited = true
    timers = []
    if socketOpen {
      socketOpen = false
      out.close = true
      out.reports.append(.closed(reason: "app terminated"))
    }
    return out
  }

  public var nextDeadline: Double? {
    exited ? nil : timers.map(\.at).min()
  }

  // MARK: - Answers

  private mutating func authenticationAnswer(
    _ message: String, at now: Double, into out: inout OnionBrowserOutput
  ) {
    if message.hasPrefix("250") {
      // l.279-290: the first poll now and a second chain 0.15 s later.
      authenticated = true
      out.reports.append(.authenticated)
      if deviation.enableNetwork {
        write(
          OnionBrowserHarnessDeviation.enableNetworkCommand,
          logged: OnionBrowserHarnessDeviation.enableNetworkCommand, into: &out)
      }
      write(Self.pollCommand, logged: nil, into: &out)
      checkLoopTimer = schedule(.checkTor, at: now + timings.bootstrapPoll)
      return
    }
    out.reports.append(
      .replyError(
        command: redacted(authenticate), code: Int(message.prefix(3)) ?? 0,
        text: String(message.prefix { $0 != "\r" && $0 != "\n" })))
    if didFirstConnect {
      // l.299-312: HUP 2.5 s later.
      invalidateCheckLoop()
      invalidateStatusTimeout()
      checkLoopTimer = schedule(.hup, at: now + timings.hupAfterFailedAuthentication)
    } else {
      // l.313-317: exit(0).
      exited = true
      timers = []
      out.exitApp = true
      out.reports.append(.exitApp(reason: "authentication failed before tor connected"))
    }
  }

  private mutating func bootstrapAnswer(
    _ message: String, at now: Double, into out: inout OnionBrowserOutput
  ) {
    let key = "status/bootstrap-phase="
    for line in message.split(whereSeparator: { $0 == "\r" || $0 == "\n" }) {
      guard let start = line.indices.first(where: { line[$0...].hasPrefix(key) }) else { continue }
      if let status = OnionBrowserBootstrapStatus(line: String(line[start...])) {
        absorb(status, into: &out)
      }
    }
    // l.319-359: only before the first 100 % does an answer schedule anything.
    guard !didFirstConnect else { return }
    if message.contains("BOOTSTRAP PROGRESS=100") {
      didFirstConnect = true
      out.reports.append(.ready)
      checkLoopTimer = schedule(.checkTor, at: now + timings.heartbeatInterval)
    } else {
      checkLoopTimer = schedule(.checkTor, at: now + timings.bootstrapPoll)
    }
  }

  private mutating func absorb(
    _ status: OnionBrowserBootstrapStatus, into out: inout OnionBrowserOutput
  ) {
    if status.phase != phase {
      phase = status.phase
      out.reports.append(.bootstrap(status.phase))
    }
    if let problem = status.problem, problem != lastProblem {
      lastProblem = problem
      out.reports.append(.problem(problem))
    }
  }

  // MARK: - Timers

  private mutating func fire(at now: Double, into out: inout OnionBrowserOutput) {
    for _ in 0..<1000 {
      guard !exited,
        let next = timers.enumerated().filter({ $0.element.at <= now })
          .min(by: { ($0.element.at, $0.element.id) < ($1.element.at, $1.element.id) })
      else { return }
      let timer = timers.remove(at: next.offset)
      if checkLoopTimer == timer.id { checkLoopTimer = nil }
      if statusTimeoutTimer == timer.id { statusTimeoutTimer = nil }
      switch timer.action {
      case .activate: activate(at: now, into: &out)
      case .checkTor: checkTor(at: now, into: &out)
      case .hup: hup(at: now, into: &out)
      case .statusTimeout:
        out.reports.append(
          .replyTimeout(command: Self.heartbeatCommand, seconds: timings.heartbeatTimeout))
        hup(at: now, into: &out)
      }
    }
  }

  /// activateTorCheckLoop: a new connection (the old socket is dropped).
  private mutating func activate(at now: Double, into out: inout OnionBrowserOutput) {
    authenticated = false
    if socketOpen { out.close = true }
    socketOpen = true
    lastConnectAt = now
    out.connect = true
  }

  /// checkTor: writes to whatever socket there is (none: nothing written, timers still set).
  private mutating func checkTor(at now: Double, into out: inout OnionBrowserOutput) {
    if !didFirstConnect {
      write(Self.pollCommand, logged: nil, into: &out)
    } else {
      write(Self.heartbeatCommand, logged: nil, into: &out)
      invalidateStatusTimeout()
      statusTimeoutTimer = schedule(.statusTimeout, at: now + timings.heartbeatTimeout)
    }
  }

  private mutating func hup(at now: Double, into out: inout OnionBrowserOutput) {
    invalidateCheckLoop()
    invalidateStatusTimeout()
    write("SIGNAL HUP", logged: "SIGNAL HUP", into: &out)
    checkLoopTimer = schedule(.activate, at: now + timings.reconnectAfterHUP)
  }

  /// disableTorCheckLoop (TC.m l.192-199): close the socket, cancel the check loop timer.
  private mutating func disableCheckLoop(into out: inout OnionBrowserOutput, closing: Bool) {
    if socketOpen {
      socketOpen = false
      authenticated = false
      out.close = true
      if closing { out.reports.append(.closed(reason: "closed by the app")) }
    }
    invalidateCheckLoop()
  }

  private mutating func schedule(_ action: TimerAction, at time: Double) -> Int {
    nextID += 1
    timers.append(Timer(id: nextID, at: time, action: action))
    return nextID
  }

  private mutating func invalidateCheckLoop() {
    if let id = checkLoopTimer { timers.removeAll { $0.id == id } }
    checkLoopTimer = nil
  }

  private mutating func invalidateStatusTimeout() {
    if let id = statusTimeoutTimer { timers.removeAll { $0.id == id } }
    statusTimeoutTimer = nil
  }

  private func write(_ line: String, logged: String?, into out: inout OnionBrowserOutput) {
    guard socketOpen else { return }
    out.lines.append(line)
    if let logged { out.reports.append(.command(logged)) }
  }

  private func redacted(_ line: String) -> String {
    line.split(separator: " ").count > 1 ? "AUTHENTICATE <secret>" : line
  }

  private func output() -> OnionBrowserOutput {
    var out = OnionBrowserOutput()
    out.lineEnding = "\n"
    return out
  }
}
