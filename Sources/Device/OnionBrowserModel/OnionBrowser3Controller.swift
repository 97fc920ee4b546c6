import TorControl

/// Onion Browser 3.X's built-in tor (OnionBrowser/TorManager.swift @44edf9a8, "TM" below) over
/// Tor.framework's TORController (``TorFrameworkController``), as a pure state machine.
///
/// - start (TM l.89-205): status `starting`; the controller connects 0.65 s later (l.114); a
///   failed connect stops (l.119-130); AUTHENTICATE with the cookie, and a failure stops tor
///   (l.140-147: SIGNAL SHUTDOWN); then the progress observer (l.149-174: BOOTSTRAP events only,
///   dropped at 100 %) and the circuit-established observer (l.176-202: SETEVENTS STATUS_CLIENT,
///   GETINFO status/circuit-established). No polling, no connection guard.
/// - Ready: at CIRCUIT_ESTABLISHED, `GETINFO net/listeners/socks` (l.184-201); its first
///   address becomes the SOCKS endpoint and status `started`. No usable answer: stop, "No SOCKS
///   port".
/// - IP-stack change (l.72-87): while tor runs and the controller is connected, SETCONF of the
///   IP settings, then resetConnection (RELOAD, NEWNYM after a 250).
/// - stop (l.238-253; AppDelegate.swift l.102 on terminate, l.205-211 when the last scene
///   goes): SIGNAL SHUTDOWN. Nothing happens to tor on background.
/// - Bridges changed while tor runs (updateConfig, l.207-236): RESETCONF of UseBridges,
///   ClientTransportPlugin, Bridge, EntryNodes, ExitNodes, ExcludeNodes and StrictNodes, one
///   after another whatever each answered, then SETCONF of the transport settings.
public struct OnionBrowser3Controller: TorFrameworkHost {
  public enum Status: Hashable, Sendable {
    case stopped
    case starting
    case started
  }

  /// updateConfig's resetKeys (TM l.218-219).
  public static let resetKeys = [
    "UseBridges", "ClientTransportPlugin", "Bridge", "EntryNodes", "ExitNodes", "ExcludeNodes",
    "StrictNodes",
  ]

  public let authenticate: String
  public let deviation: OnionBrowserHarnessDeviation
  public let timings: OnionBrowserTimings
  public private(set) var status = Status.stopped
  public internal(set) var phase: BootstrapPhase?
  public internal(set) var lastProblem: BootstrapWarning?
  /// torSocks5: the SOCKS listener tor reported ("127.0.0.1:39050").
  public private(set) var socksEndpoint: String?
  var framework: TorFrameworkController?
  var socketOpen = false
  var parser = ControlReplyParser()
  private var connectAt: Double?
  var networkEnabled = false
  private var resets: [String] = []
  private var pendingConfiguration: [(String, String)] = []

  public init(
    authenticate: String, deviation: OnionBrowserHarnessDeviation,
    timings: OnionBrowserTimings = OnionBrowserTimings()
  ) {
    self.authenticate = authenticate
    self.deviation = deviation
    self.timings = timings
  }

  public mutating func launch(at now: Double) -> OnionBrowserOutput {
    status = .starting
    connectAt = now + timings.connectDelay3
    return tick(at: now)
  }

  public mutating func connected(at now: Double) -> OnionBrowserOutput {
    var out = OnionBrowserOutput()
    socketOpen = true
    var framework = TorFrameworkController()
    framework.send(authenticate, .plain, .authenticate, into: &out, logged: redacted)
    self.framework = framework
    return out
  }

  /// l.119-130: status stopped, completion(error).
  public mutating func connectFailed(reason: String, at now: Double) -> OnionBrowserOutput {
    var out = OnionBrowserOutput()
    status = .stopped
    out.reports.append(.failed(reason: reason))
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
    return out
  }

  public mutating func networkChanged(reachable: Bool, at now: Double) -> OnionBrowserOutput {
    var out = tick(at: now)
    guard status != .stopped, socketOpen else { return out }
    send(
      OnionBrowser2Controller.setConf(OnionBrowser2Controller.ipConfiguration), .plain,
      .configuration("ip"), into: &out)
    return out
  }

  /// TorManager.stop(): observers removed, SIGNAL SHUTDOWN.
  public mutating func stop(at now: Double) -> OnionBrowserOutput {
    var out = OnionBrowserOutput()
    stop(into: &out)
    return out
  }

  public mutating func reconfigure(transport: [(String, String)], at now: Double)
    -> OnionBrowserOutput
  {
    var out = OnionBrowserOutput()
    pendingConfiguration = transport
    resets = Self.resetKeys
    nextReset(into: &out)
    return out
  }

  public var nextDeadline: Double? { connectAt }

  // MARK: - Completions

  mutating func complete(
    _ completion: TorFrameworkController.Completion, at now: Double,
    into out: inout OnionBrowserOutput
  ) {
    switch completion {
    case .command(.authenticate, let success, let code, let text):
      guard success else {
        out.reports.append(.replyError(command: redacted, code: code, text: text))
        stop(into: &out)
        out.reports.append(.failed(reason: "authentication failed: \(code) \(text)"))
        return
      }
      out.reports.append(.authenticated)
      if var framework {
        framework.addProgressObserver()
        let more = framework.addCircuitEstablishedObserver(into: &out)
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
      if !success { out.reports.append(.replyError(command: tag, code: code, text: text)) }
      if tag == "ip" {
        framework?.resetConnection(into: &out)
      } else if tag == "reset" {
        nextReset(into: &out)
      }
    case .command:
      break
    case .info(.socksListeners, let values):
      // l.185-201: "host:port", host an IPv4 address.
      let parts = values.first?.split(separator: ":") ?? []
      guard parts.count >= 2, let host = parts.first, Self.isIPv4(host),
        let port = parts.last, let number = UInt16(port), number > 0
      else {
        stop(into: &out)
        out.reports.append(.failed(reason: "No SOCKS port"))
        return
      }
      socksEndpoint = "\(host):\(number)"
      status = .started
      out.reports.append(.socksListener("\(host):\(number)"))
      out.reports.append(.ready)
    case .info(.circuitEstablishedInfo, _):
      harnessEnableNetwork(into: &out)
    case .info:
      break
    case .bootstrapEvent(let line):
      if let status = OnionBrowserBootstrapStatus(line: line) {
        absorb(status, into: &out)
        if status.phase.progress >= 100 { framework?.removeProgressObserver() }
      }
    case .circuitEstablished(let established):
      guard established else { return }
      framework?.removeCircuitEstablishedObserver()
      framework?.removeProgressObserver()
      out.reports.append(.circuitEstablished)
      send(
        "GETINFO net/listeners/socks", .getInfo(["net/listeners/socks"]), .socksListeners,
        into: &out)
    }
  }

  private mutating func stop(into out: inout OnionBrowserOutput) {
    status = .stopped
    connectAt = nil
    framework?.removeCircuitEstablishedObserver()
    framework?.removeProgressObserver()
    if socketOpen, var framework {
      framework.disconnect(into: &out)
      self.framework = framework
    }
  }

  private mutating func nextReset(into out: inout OnionBrowserOutput) {
    if resets.isEmpty {
      if !pendingConfiguration.isEmpty {
        send(
          OnionBrowser2Controller.setConf(pendingConfiguration), .plain,
          .configuration("transport"), into: &out)
        pendingConfiguration = []
      }
      return
    }
    send("RESETCONF " + resets.removeFirst(), .plain, .configuration("reset"), into: &out)
  }

  mutating func send(
    _ line: String, _ kind: TorFrameworkController.Kind,
    _ purpose: TorFrameworkController.Purpose, into out: inout OnionBrowserOutput
  ) {
    guard var framework else { return }
    framework.send(line, kind, purpose, into: &out)
    self.framework = framework
  }

  /// NWEndpoint's IPv4Address(String): four dotted decimal octets.
  static func isIPv4(_ text: Substring) -> Bool {
    let octets = text.split(separator: ".", omittingEmptySubsequences: false)
    return octets.count == 4 && octets.allSatisfy { UInt8($0) != nil }
  }

  private var redacted: String {
    authenticate.split(separator: " ").count > 1 ? "AUTHENTICATE <secret>" : authenticate
  }
}
