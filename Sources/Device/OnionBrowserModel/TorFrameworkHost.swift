import TorControl

/// A version whose OnionManager drives tor through Tor.framework's TORController (2.X, 3.X):
/// the control socket's bytes go through the framework, and its completions back to the
/// version's own rules. What the two versions do alike with the socket is here, once.
protocol TorFrameworkHost: Sendable {
  /// The control socket is connected.
  var socketOpen: Bool { get set }
  /// TORController on that socket, nil once it closed.
  var framework: TorFrameworkController? { get set }
  var parser: ControlReplyParser { get set }
  /// The harness's deviation from the app (docs/onion-browser.md), and whether it was done.
  var deviation: OnionBrowserHarnessDeviation { get }
  var networkEnabled: Bool { get set }
  /// The bootstrap as the app last read it.
  var phase: BootstrapPhase? { get set }
  var lastProblem: BootstrapWarning? { get set }
  /// An app command through the controller the version holds.
  mutating func send(
    _ line: String, _ kind: TorFrameworkController.Kind,
    _ purpose: TorFrameworkController.Purpose, into out: inout OnionBrowserOutput)
  mutating func tick(at now: Double) -> OnionBrowserOutput
  /// The version's answer to one of TORController's completion blocks.
  mutating func complete(
    _ completion: TorFrameworkController.Completion, at now: Double,
    into out: inout OnionBrowserOutput)
}

extension TorFrameworkHost {
  mutating func closeFrameworkSocket(reason: String, at now: Double) -> OnionBrowserOutput {
    var out = OnionBrowserOutput()
    guard socketOpen else { return out }
    socketOpen = false
    framework = nil
    // A new connection is a new byte stream: nothing of this one (a half-read reply, a
    // parser that threw) carries over.
    parser = ControlReplyParser()
    out.reports.append(.closed(reason: reason))
    return out
  }

  /// Bytes from tor: each whole reply through TORController, its completions to the version;
  /// a malformed reply (or one past the parser's caps) closes the connection, as
  /// TORController's does, and the edge closes the socket, so a peer that keeps sending is
  /// no longer read.
  mutating func receiveThroughFramework(_ bytes: some Sequence<UInt8>, at now: Double)
    -> OnionBrowserOutput
  {
    var out = tick(at: now)
    guard socketOpen else { return out }
    parser.append(bytes)
    while socketOpen, var framework {
      let message: ControlMessage?
      do { message = try parser.next() } catch {
        out.merge(closeFrameworkSocket(reason: "\(error)", at: now))
        out.close = true
        break
      }
      guard let message else { break }
      let completions = framework.handle(message, into: &out)
      self.framework = framework
      for completion in completions { complete(completion, at: now, into: &out) }
      if self.framework?.channelOpen == false {
        socketOpen = false
        parser = ControlReplyParser()
        out.reports.append(.closed(reason: "SIGNAL SHUTDOWN answered"))
      }
    }
    return out
  }

  /// The harness's DisableNetwork=0 (OnionBrowserHarnessDeviation), once the app's own setup
  /// is done: its observers are in place before tor's first event, as they are in the app,
  /// whose tor has long been bootstrapping when the controller connects.
  /// TAKEOWNERSHIP goes here too: sent with the app's own commands in flight, its answer
  /// would reach their observers first (Tor.framework matches answers newest first).
  mutating func harnessEnableNetwork(into out: inout OnionBrowserOutput) {
    guard !networkEnabled else { return }
    networkEnabled = true
    if deviation.takeOwnership {
      send("TAKEOWNERSHIP", .plain, .configuration("harness"), into: &out)
    }
    guard deviation.enableNetwork else { return }
    send(
      OnionBrowserHarnessDeviation.enableNetworkCommand, .plain, .configuration("harness"),
      into: &out)
  }

  /// A bootstrap status read: reported when the phase or the problem is new.
  mutating func absorb(
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
}
