/// Onion Browser's way of driving a C tor through its control port, as a pure state machine:
/// bytes and inputs in, with the time passed in, command lines and reports out. No sockets, no
/// clock reads; the edge (ControlPortTorBackend) owns the connection and calls ``tick(at:)`` by
/// ``nextDeadline``.
///
/// What it does, from Onion Browser's sources (../shared/reference/apps-contract.md):
/// - AUTHENTICATE (the edge builds the line), optionally TAKEOWNERSHIP (Tor.framework's
///   controller, so tor exits when this connection closes), SETEVENTS STATUS_CLIENT (2.X: BOOTSTRAP
///   events and WARN problems), SETCONF DisableNetwork=0 to start; each waits for its answer.
/// - 1.X: `GETINFO status/bootstrap-phase` at once and then 0.15 s after each answer, until
///   PROGRESS=100 (from a poll or an event). One poll is outstanding at most, as in 1.X, whose
///   timer is re-armed by the answer.
/// - 1.X heartbeat after 100 %: `GETINFO orconn-status` 5.0 s after reaching 100 and 5.0 s
///   after each good answer; no answer within 3.0 s, or an error answer, means SIGNAL HUP, and
///   the next heartbeat follows 1.15 s later (1.X reconnects 1.0 s after a HUP and checks 0.15 s
///   after authenticating; this controller keeps its connection). A late answer to a heartbeat
///   already given up on is dropped.
/// - 2.X network change: SIGNAL RELOAD then SIGNAL NEWNYM (tor rate-limits NEWNYM to one per
///   10 s and still answers 250 OK).
/// - 2.X stall guard: armed at start for 15 s and re-armed by every bootstrap report (a new
///   phase or a new problem: OnionManager's connectionAlive() runs on each STATUS_CLIENT
///   BOOTSTRAP event). When it expires before 100 %: SETCONF DisableNetwork=1 then =0, unless
///   bridges are configured (that would break the bridge's transport; Onion Browser then only
///   tells the user). It does not repeat: OnionManager stops its connection guard after the
///   first expiry (stopConnectionGuard()), and so does this controller. CIRCUIT_ESTABLISHED
///   disarms it too, as in OnionManager.
/// - When tor has answered a SIGNAL RELOAD or HUP: SETCONF DisableNetwork=0 again
///   (``Configuration/reenableNetworkAfterReload``). Not Onion Browser's own step: its tor has
///   no DisableNetwork in its configuration, but the harness starts tor with `DisableNetwork 1`
///   in the torrc, and Debian's tor 0.4.9.11 re-applies the torrc on a reload ("Reloading config
///   and resetting internal state", then "Closing no-longer-configured Socks listener",
///   "DisableNetwork is set"), while status/bootstrap-phase keeps saying PROGRESS=100. tor
///   answers the signal first and reloads on its next loop turn, so a SETCONF written together
///   with the signal is undone; one written after the answer sticks (10 of 10 tries each).
/// - Stop: SETCONF DisableNetwork=1, then close.
public struct OnionBrowserController: Sendable {
  public struct Configuration: Hashable, Sendable {
    /// The complete AUTHENTICATE line (the edge reads the cookie file or knows the password).
    public var authenticate: String
    /// Send TAKEOWNERSHIP after authenticating (tor exits when the connection closes).
    public var takeOwnership: Bool
    /// With bridges the stall guard never toggles DisableNetwork.
    public var bridgesConfigured: Bool
    /// Send SETCONF DisableNetwork=0 after each SIGNAL RELOAD or HUP (a torrc with
    /// DisableNetwork 1 comes back on a reload).
    public var reenableNetworkAfterReload: Bool
    public var timings: OnionBrowserTimings

    public init(
      authenticate: String = "AUTHENTICATE", takeOwnership: Bool = false,
      bridgesConfigured: Bool = false, reenableNetworkAfterReload: Bool = true,
      timings: OnionBrowserTimings = OnionBrowserTimings()
    ) {
      self.authenticate = authenticate
      self.takeOwnership = takeOwnership
      self.bridgesConfigured = bridgesConfigured
      self.reenableNetworkAfterReload = reenableNetworkAfterReload
      self.timings = timings
    }
  }

  public enum Stage: Hashable, Sendable {
    case idle
    /// AUTHENTICATE and the setup commands are on their way.
    case settingUp
    case running
    case closed
  }

  public static let pollCommand = "GETINFO status/bootstrap-phase"
  public static let heartbeatCommand = "GETINFO orconn-status"

  private enum Purpose: Hashable, Sendable {
    case authenticate
    case setup
    case poll
    case heartbeat
    /// SIGNAL RELOAD or HUP: tor re-reads its torrc.
    case reload
    case other
  }

  /// A command whose answer has not arrived; answers come back in order.
  private struct Pending: Hashable, Sendable {
    let line: String
    /// What reports may show of it: AUTHENTICATE's secret never goes to a report, even when
    /// tor refuses it (a failed AUTHENTICATE used to be reported with its cookie or password).
    let shown: String
    let purpose: Purpose
    let sentAt: Double
    var timedOut = false
  }

  public let configuration: Configuration
  public private(set) var stage = Stage.idle
  /// The latest bootstrap phase reported, nil before the first.
  public private(set) var phase: BootstrapPhase?
  /// The latest bootstrap problem reported.
  public private(set) var lastProblem: BootstrapWarning?
  /// True once PROGRESS=100 was seen.
  public private(set) var isBootstrapped = false
  private var authenticated = false
  private var parser = ControlReplyParser()
  private var pending: [Pending] = []
  private var setupSteps: [String] = []
  private var nextPollAt: Double?
  private var nextHeartbeatAt: Double?
  private var stallDeadline: Double?

  private var timings: OnionBrowserTimings { configuration.timings }

  public init(configuration: Configuration) {
    self.configuration = configuration
  }

  /// The connection is open: sends AUTHENTICATE and arms the stall guard.
  public mutating func start(at now: Double) -> OnionBrowserOutput {
    var output = OnionBrowserOutput()
    guard stage == .idle else { return output }
    stage = .settingUp
    setupSteps =
      (configuration.takeOwnership ? ["TAKEOWNERSHIP"] : [])
      + ["SETEVENTS STATUS_CLIENT", "SETCONF DisableNetwork=0"]
    stallDeadline = now + timings.stallGuard
    let line = configuration.authenticate
    let logged = line.split(separator: " ").count > 1 ? "AUTHENTICATE <secret>" : line
    send(line, .authenticate, logged: logged, at: now, into: &output)
    return output
  }

  /// Bytes read from the control port, in any split.
  public mutating func receive(_ bytes: some Sequence<UInt8>, at now: Double)
    -> OnionBrowserOutput
  {
    var output = OnionBrowserOutput()
    guard stage != .closed else { return output }
    // Timers first: an answer read after its deadline is late.
    fireTimers(at: now, into: &output)
    parser.append(bytes)
    while stage != .closed {
      let message: ControlMessage?
      do { message = try parser.next() } catch {
        close(reason: "\(error)", into: &output)
        break
      }
      guard let message else { break }
      handle(message, at: now, into: &output)
    }
    fireTimers(at: now, into: &output)
    return output
  }

  /// Time passed: sends what is due (polls, heartbeats, HUP, the stall toggle).
  public mutating func tick(at now: Double) -> OnionBrowserOutput {
    var output = OnionBrowserOutput()
    fireTimers(at: now, into: &output)
    return output
  }

  /// The device's network changed (an IP-stack change in 2.X): SIGNAL RELOAD, SIGNAL NEWNYM.
  /// Ignored before the setup is done (tor is configured afresh then anyway).
  public mutating func networkChanged(at now: Double) -> OnionBrowserOutput {
    var output = OnionBrowserOutput()
    guard stage == .running else { return output }
    send("SIGNAL RELOAD", .reload, logged: "SIGNAL RELOAD", at: now, into: &output)
    send("SIGNAL NEWNYM", .other, logged: "SIGNAL NEWNYM", at: now, into: &output)
    return output
  }

  /// Stop: SETCONF DisableNetwork=1 (when authenticated) and close.
  public mutating func stop(at now: Double) -> OnionBrowserOutput {
    var output = OnionBrowserOutput()
    guard stage != .closed else { return output }
    if authenticated {
      let line = "SETCONF DisableNetwork=1"
      send(line, .other, logged: line, at: now, into: &output)
    }
    close(reason: "stopped", into: &output)
    return output
  }

  /// tor closed the connection (or reading it failed).
  public mutating func connectionClosed(reason: String, at now: Double) -> OnionBrowserOutput {
    var output = OnionBrowserOutput()
    guard stage != .closed else { return output }
    close(reason: reason, into: &output)
    return output
  }

  /// When ``tick(at:)`` must run next; nil when nothing is scheduled.
  public var nextDeadline: Double? {
    guard stage == .running else { return nil }
    var deadlines = pending.filter { $0.purpose == .heartbeat && !$0.timedOut }
      .map { $0.sentAt + timings.heartbeatTimeout }
    if let nextPollAt { deadlines.append(nextPollAt) }
    if let nextHeartbeatAt { deadlines.append(nextHeartbeatAt) }
    if let stallDeadline { deadlines.append(stallDeadline) }
    return deadlines.min()
  }

  // MARK: - Answers and events

  private mutating func handle(
    _ message: ControlMessage, at now: Double, into output: inout OnionBrowserOutput
  ) {
    if message.isAsyncEvent {
      for line in message.lines { absorbEvent(line.text, at: now, into: &output) }
      return
    }
    guard !pending.isEmpty else {
      output.reports.append(
        .replyError(
          command: "(none)", code: message.code, text: message.lines.last?.text ?? ""))
      return
    }
    let command = pending.removeFirst()
    let failed = !message.isSuccess
    if failed {
      output.reports.append(
        .replyError(
          command: command.shown, code: message.code, text: message.lines.last?.text ?? ""))
    }
    switch command.purpose {
    case .authenticate:
      guard !failed else {
        close(reason: "authentication failed", into: &output)
        return
      }
      authenticated = true
      output.reports.append(.authenticated)
      nextSetupStep(at: now, into: &output)
    case .setup:
      // A failed SETEVENTS or SETCONF is reported; tor may bootstrap anyway, so carry on.
      nextSetupStep(at: now, into: &output)
    case .poll:
      if !failed {
        for line in message.lines {
          if let status = OnionBrowserBootstrapStatus(line: line.text) {
            absorb(status, at: now, into: &output)
          }
        }
      }
      if !isBootstrapped { nextPollAt = now + timings.bootstrapPoll }
    case .heartbeat:
      // Already given up on (HUP sent): nothing more to do.
      guard !command.timedOut else { return }
      if failed {
        // 1.X: an orconn-status answer without "250 OK" means tor is unwell: HUP.
        hup(at: now, into: &output)
      } else {
        nextHeartbeatAt = now + timings.heartbeatInterval
      }
    case .reload:
      if !failed && configuration.reenableNetworkAfterReload {
        let line = "SETCONF DisableNetwork=0"
        send(line, .other, logged: line, at: now, into: &output)
      }
    case .other:
      break
    }
  }

  private mutating func nextSetupStep(at now: Double, into output: inout OnionBrowserOutput) {
    if setupSteps.isEmpty {
      stage = .running
      nextPollAt = now
      return
    }
    let line = setupSteps.removeFirst()
    send(line, .setup, logged: line, at: now, into: &output)
  }

  private mutating func absorbEvent(
    _ text: String, at now: Double, into output: inout OnionBrowserOutput
  ) {
    if let status = OnionBrowserBootstrapStatus(line: text) {
      absorb(status, at: now, into: &output)
    } else if text.hasPrefix("STATUS_CLIENT "),
      text.split(separator: " ").dropFirst(2).first
        == "CIRCUIT_ESTABLISHED"
    {
      stallDeadline = nil
      output.reports.append(.circuitEstablished)
    }
  }

  /// Reports what changed; each report re-arms the stall guard (while it is armed).
  private mutating func absorb(
    _ status: OnionBrowserBootstrapStatus, at now: Double, into output: inout OnionBrowserOutput
  ) {
    var news = false
    if status.phase != phase {
      phase = status.phase
      output.reports.append(.bootstrap(status.phase))
      news = true
    }
    if let problem = status.problem, problem != lastProblem {
      lastProblem = problem
      output.reports.append(.problem(problem))
      news = true
    }
    if news, stallDeadline != nil { stallDeadline = now + timings.stallGuard }
    if status.phase.progress >= 100 && !isBootstrapped {
      isBootstrapped = true
      nextPollAt = nil
      stallDeadline = nil
      nextHeartbeatAt = now + timings.heartbeatInterval
    }
  }

  // MARK: - Timers

  private mutating func fireTimers(at now: Double, into output: inout OnionBrowserOutput) {
    guard stage == .running else { return }
    for index in pending.indices
    where pending[index].purpose == .heartbeat && !pending[index].timedOut
      && now >= pending[index].sentAt + timings.heartbeatTimeout
    {
      pending[index].timedOut = true
      output.reports.append(
        .replyTimeout(command: pending[index].shown, seconds: timings.heartbeatTimeout))
      hup(at: now, into: &output)
    }
    if let at = nextPollAt, now >= at, !isBootstrapped {
      nextPollAt = nil
      send(Self.pollCommand, .poll, logged: nil, at: now, into: &output)
    }
    if let at = nextHeartbeatAt, now >= at {
      nextHeartbeatAt = nil
      send(Self.heartbeatCommand, .heartbeat, logged: nil, at: now, into: &output)
    }
    if let at = stallDeadline, now >= at, !isBootstrapped {
      stallDeadline = nil
      let toggle = !configuration.bridgesConfigured
      output.reports.append(.stalled(seconds: timings.stallGuard, toggled: toggle))
      if toggle {
        for line in ["SETCONF DisableNetwork=1", "SETCONF DisableNetwork=0"] {
          send(line, .other, logged: line, at: now, into: &output)
        }
      }
    }
  }

  private mutating func hup(at now: Double, into output: inout OnionBrowserOutput) {
    send("SIGNAL HUP", .reload, logged: "SIGNAL HUP", at: now, into: &output)
    nextHeartbeatAt = now + timings.heartbeatAfterHUP
  }

  private mutating func send(
    _ line: String, _ purpose: Purpose, logged: String?, at now: Double,
    into output: inout OnionBrowserOutput
  ) {
    pending.append(Pending(line: line, shown: logged ?? line, purpose: purpose, sentAt: now))
    output.lines.append(line)
    if let logged { output.reports.append(.command(logged)) }
  }

  private mutating func close(reason: String, into output: inout OnionBrowserOutput) {
    stage = .closed
    pending = []
    nextPollAt = nil
    nextHeartbeatAt = nil
    stallDeadline = nil
    output.close = true
    output.reports.append(.closed(reason: reason))
  }
}
