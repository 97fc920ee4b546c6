import TorControl

/// Onion Browser 2.X's driving of tor (OnionBrowser/OnionManager.swift @9a17dd4f, "OM" below)
/// over Tor.framework's TORController (``TorFrameworkController``), as a pure state machine.
///
/// - startTor (OM l.156-371): state `started`; the controller connects 1 s later (l.221) and
///   authenticates with the cookie (l.293); on success it adds the circuit-established observer
///   (l.296-307: SETEVENTS STATUS_CLIENT, GETINFO status/circuit-established) and the progress
///   observer (l.310-331: STATUS_CLIENT BOOTSTRAP events only, dropped at 100 %). No polling.
/// - The connection guard (l.339-370): armed at startTor for 15 s (connectionAlive, l.445-447),
///   checked once a second from 1 s in (l.343-344), re-armed by every BOOTSTRAP event (l.314),
///   stopped by CIRCUIT_ESTABLISHED (l.300) or by its own expiry (l.366), not by 100 %. Expired:
///   DisableNetwork=1 then =0 unless a transport is configured (l.353-360), and the delegate's
///   torConnDifficulties (l.362-364), which shows the UI like torConnFinished.
/// - Ready: CIRCUIT_ESTABLISHED (state `connected`, torConnFinished).
/// - IP-stack change (IpSupport callback, l.95-108): SETCONF of the IP settings, then
///   torReconnect: SIGNAL RELOAD, and NEWNYM only once RELOAD answered 250.
/// - stopTor (l.376-392, AppDelegate.swift l.229-231 on background): SIGNAL SHUTDOWN; the
///   controller is dropped (later app commands go nowhere); the guard is not stopped.
/// - Bridges changed while tor runs (l.191-215): RESETCONF UseBridges, ClientTransportPlugin,
///   Bridge, each after the previous succeeded, then SETCONF of the transport settings.
public struct OnionBrowser2Controller: TorFrameworkHost {
  public enum State: Hashable, Sendable {
    case none
    case started
    case connected
    case stopped
  }

  /// IpSupport.Status.torConf for an IPv4 network (IPtProxyUI IpSupport.swift), as
  /// Transport.asConf quotes it: what the IP-stack change sets.
  public static let ipConfiguration = [
    ("ClientPreferIPv6ORPort", "auto"), ("ClientUseIPv4", "1"), ("ClientUseIPv6", "1"),
  ]

  public let authenticate: String
  public let deviation: OnionBrowserHarnessDeviation
  public let timings: OnionBrowserTimings
  /// `transport != .none`: the guard never cycles DisableNetwork.
  public let bridgesConfigured: Bool
  public private(set) var state = State.none
  public internal(set) var phase: BootstrapPhase?
  public internal(set) var lastProblem: BootstrapWarning?
  var framework: TorFrameworkController?
  /// `torController` is set (nil after stopTor).
  private var controllerAttached = false
  var socketOpen = false
  var parser = ControlReplyParser()
  private var connectAt: Double?
  var networkEnabled = false
  private var guardCheckAt: Double?
  private var connectionTimeout = 0.0
  private var pendingConfiguration: [(String, String)] = []

  public init(
    authenticate: String, deviation: OnionBrowserHarnessDeviation, bridgesConfigured: Bool,
    timings: OnionBrowserTimings = OnionBrowserTimings()
  ) {
    self.authenticate = authenticate
    self.deviation = deviation
    self.bridgesConfigured = bridgesConfigured
    self.timings = timings
  }

  public var guardArmed: Bool { guardCheckAt != nil }

  // MARK: - Inputs

  /// startTor: tor (in process) starts; the controller connects 1 s later; the guard is armed.
  public mutating func launch(at now: Double) -> OnionBrowserOutput {
    let out = OnionBrowserOutput()
    state = .started
    connectAt = now + timings.connectDelay2
    connectionTimeout = now + timings.stallGuard
    guardCheckAt = now + timings.stallGuardCheck
    return out.merged(tick(at: now))
  }

  public mutating func connected(at now: Double) -> OnionBrowserOutput {
    var out = OnionBrowserOutput()
    socketOpen = true
    controllerAttached = true
    var framework = TorFrameworkController()
    framework.send(authenticate, .plain, .authenticate, into: &out, logged: redacted)
    self.framework = framework
    return out
  }

  /// TORController connect failed: OnionManager prints the error; the AUTHENTICATE that follows
  /// goes nowhere (no channel). Only the guard is left.
  public mutating func connectFailed(reason: String, at now: Double) -> OnionBrowserOutput {
    var out = OnionBrowserOutput()
    out.reports.append(.closed(reason: reason))
    return out
  }

  public mutating func connectionClosed(reason: String, at now: Double) -> OnionBrowserOutput {
    closeFrameworkSocket(reason: reason, at: now)
  }

  public mutating func receive(_ bytes: some Sequence<UInt8>, at now: Double) -> OnionBrowserOutput
  {
    receiveThroughFramework(bytes, at: now)
  }

  public mutating func tick(at now: Double) -> OnionBrowserOutput {
    var out = OnionBrowserOutput()
    if let at = connectAt, now >= at {
      connectAt = nil
      if !socketOpen { out.connect = true }
    }
    while let at = guardCheckAt, now >= at {
      guardCheckAt = at + timings.stallGuardCheck
      if at > connectionTimeout { guardExpired(at: now, into: &out) }
    }
    return out
  }

  /// IpSupport's callback while tor runs: SETCONF of the IP settings, then RELOAD (+NEWNYM).
  public mutating func networkChanged(reachable: Bool, at now: Double) -> OnionBrowserOutput {
    var out = tick(at: now)
    guard state == .started || state == .connected else { return out }
    send(Self.setConf(Self.ipConfiguration), .plain, .configuration("ip"), into: &out)
    return out
  }

  /// stopTor (background, and terminate when not stopped yet).
  public mutating func stop(at now: Double) -> OnionBrowserOutput {
    var out = tick(at: now)
    guard state != .stopped else { return out }
    if controllerAttached, var framework {
      framework.disconnect(into: &out)
      self.framework = framework
    }
    controllerAttached = false
    state = .stopped
    return out
  }

  /// New bridge settings while tor runs (startTor with needsReconfiguration, l.191-215).
  public mutating func reconfigure(transport: [(String, String)], at now: Double)
    -> OnionBrowserOutput
  {
    var out = OnionBrowserOutput()
    pendingConfiguration = transport
    send("RESETCONF UseBridges", .plain, .configuration("reset UseBridges"), into: &out)
    return out
  }

  public var nextDeadline: Double? {
    [connectAt, guardCheckAt].compactMap { $0 }.min()
  }

  // MARK: - Completions

  mutating func complete(
    _ completion: TorFrameworkController.Completion, at now: Double,
    into out: inout OnionBrowserOutput
  ) {
    switch completion {
    case .command(.authenticate, let success, let code, let text):
      guard success else {
        // "Didn't connect to control port." Nothing else: the guard remains.
        out.reports.append(.replyError(command: redacted, code: code, text: text))
        return
      }
      out.reports.append(.authenticated)
      // l.296 then l.310: the circuit-established observer first, then the progress observer.
      if var framework {
        let more = framework.addCircuitEstablishedObserver(into: &out)
        framework.addProgressObserver()
        self.framework = framework
        for completion in more { complete(completion, at: now, into: &out) }
      }
    case .command(.reload, let success, let code, let text):
      if success {
        if deviation.enableNetwork {
          send(
            OnionBrowserHarnessDeviation.enableNetworkCommand, .plain, .configuration("harness"),
            into: &out)
        }
      } else {
        out.reports.append(.replyError(command: "SIGNAL RELOAD", code: code, text: text))
      }
    case .command(.configuration(let tag), let success, let code, let text):
      if !success {
        out.reports.append(.replyError(command: tag, code: code, text: text))
      }
      switch tag {
      // l.99-106: whatever the answer, torReconnect.
      case "ip": framework?.resetConnection(into: &out)
      case "reset UseBridges" where success:
        send(
          "RESETCONF ClientTransportPlugin", .plain, .configuration("reset ClientTransportPlugin"),
          into: &out)
      case "reset ClientTransportPlugin" where success:
        send("RESETCONF Bridge", .plain, .configuration("reset Bridge"), into: &out)
      case "reset Bridge" where success:
        send(Self.setConf(pendingConfiguration), .plain, .configuration("transport"), into: &out)
      default: break
      }
    case .command(_, let success, let code, let text):
      if !success && code != 250 {
        out.reports.append(.replyError(command: "command", code: code, text: text))
      }
    case .info(.circuitEstablishedInfo, _):
      harnessEnableNetwork(into: &out)
    case .info:
      break
    case .bootstrapEvent(let line):
      // connectionAlive() on every BOOTSTRAP event (l.313-314).
      connectionTimeout = now + timings.stallGuard
      if let status = OnionBrowserBootstrapStatus(line: line) {
        absorb(status, into: &out)
        if status.phase.progress >= 100 { framework?.removeProgressObserver() }
      }
    case .circuitEstablished(let established):
      guard established else { return }
      state = .connected
      framework?.removeCircuitEstablishedObserver()
      guardCheckAt = nil
      out.reports.append(.circuitEstablished)
      out.reports.append(.ready)
    }
  }

  private mutating func guardExpired(at now: Double, into out: inout OnionBrowserOutput) {
    var toggled = false
    if !bridgesConfigured, controllerAttached, framework?.channelOpen == true {
      send("SETCONF DisableNetwork=1", .plain, .configuration("guard"), into: &out)
      send("SETCONF DisableNetwork=0", .plain, .configuration("guard"), into: &out)
      toggled = true
    }
    out.reports.append(.stalled(seconds: timings.stallGuard, toggled: toggled))
    guardCheckAt = nil
  }

  /// An app command through the controller it holds (none after stopTor: nothing is sent).
  mutating func send(
    _ line: String, _ kind: TorFrameworkController.Kind,
    _ purpose: TorFrameworkController.Purpose, into out: inout OnionBrowserOutput
  ) {
    guard controllerAttached, var framework else { return }
    framework.send(line, kind, purpose, into: &out)
    self.framework = framework
  }

  /// setConfs (TF.m l.482-506) with Transport.asConf's quoting.
  static func setConf(_ pairs: [(String, String)]) -> String {
    "SETCONF " + pairs.map { "\($0.0)=\"\($0.1)\"" }.joined(separator: " ")
  }

  private var redacted: String {
    authenticate.split(separator: " ").count > 1 ? "AUTHENTICATE <secret>" : authenticate
  }
}

extension OnionBrowserOutput {
  func merged(_ other: OnionBrowserOutput) -> OnionBrowserOutput {
    var copy = self
    copy.merge(other)
    return copy
  }
}
