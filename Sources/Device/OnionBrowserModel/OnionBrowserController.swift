import TorControl

/// Onion Browser's driving of tor, one major version at a time, as a pure state machine: inputs
/// (the app's lifecycle, connection events, bytes read) with the time passed in, command lines
/// and reports out. No sockets, no clock reads; the edge (ControlPortTorBackend) owns the
/// connection, opens one when an output says `connect`, and calls ``tick(at:)`` by
/// ``nextDeadline``.
///
/// Each version's rules are in its own type, read at its commit (``OnionBrowserVersion``):
/// ``OnionBrowser1Controller`` (1.X's own client: polls, heartbeat, HUP and reconnect),
/// ``OnionBrowser2Controller`` (2.X's OnionManager over Tor.framework: events, the 15 s
/// connection guard, SIGNAL SHUTDOWN on background) and ``OnionBrowser3Controller`` (3.X's
/// TorManager: events, ready with the SOCKS listener, no guard). What the harness adds for its
/// own tor is ``OnionBrowserHarnessDeviation``, in one place.
public struct OnionBrowserController: Sendable {
  public struct Configuration: Hashable, Sendable {
    public var version: OnionBrowserVersion
    /// The complete AUTHENTICATE line (the edge reads the cookie file or knows the password).
    public var authenticate: String
    /// tor uses bridges: 2.X's guard never cycles DisableNetwork.
    public var bridgesConfigured: Bool
    public var deviation: OnionBrowserHarnessDeviation
    public var timings: OnionBrowserTimings

    public init(
      version: OnionBrowserVersion, authenticate: String = "AUTHENTICATE",
      bridgesConfigured: Bool = false,
      deviation: OnionBrowserHarnessDeviation = OnionBrowserHarnessDeviation(),
      timings: OnionBrowserTimings = OnionBrowserTimings()
    ) {
      self.version = version
      self.authenticate = authenticate
      self.bridgesConfigured = bridgesConfigured
      self.deviation = deviation
      self.timings = timings
    }
  }

  enum Core: Sendable {
    case v1(OnionBrowser1Controller)
    case v2(OnionBrowser2Controller)
    case v3(OnionBrowser3Controller)
  }

  public let configuration: Configuration
  var core: Core

  public init(configuration: Configuration) {
    self.configuration = configuration
    switch configuration.version {
    case .v1:
      core = .v1(
        OnionBrowser1Controller(
          authenticate: configuration.authenticate, deviation: configuration.deviation,
          timings: configuration.timings))
    case .v2:
      core = .v2(
        OnionBrowser2Controller(
          authenticate: configuration.authenticate, deviation: configuration.deviation,
          bridgesConfigured: configuration.bridgesConfigured, timings: configuration.timings))
    case .v3:
      core = .v3(
        OnionBrowser3Controller(
          authenticate: configuration.authenticate, deviation: configuration.deviation,
          timings: configuration.timings))
    }
  }

  /// The app starts tor (1.X startTor, 2.X startTor, 3.X start).
  public mutating func launch(at now: Double) -> OnionBrowserOutput {
    apply {
      $0.launch(at: now)
    } _: {
      $0.launch(at: now)
    } _: {
      $0.launch(at: now)
    }
  }

  /// The connection asked for by `connect` is open.
  public mutating func connected(at now: Double) -> OnionBrowserOutput {
    apply {
      $0.connected(at: now)
    } _: {
      $0.connected(at: now)
    } _: {
      $0.connected(at: now)
    }
  }

  public mutating func connectFailed(reason: String, at now: Double) -> OnionBrowserOutput {
    apply {
      $0.connectFailed(reason: reason, at: now)
    } _: {
      $0.connectFailed(reason: reason, at: now)
    } _: {
      $0.connectFailed(reason: reason, at: now)
    }
  }

  /// tor closed the connection (or reading it failed).
  public mutating func connectionClosed(reason: String, at now: Double) -> OnionBrowserOutput {
    apply {
      $0.connectionClosed(reason: reason, at: now)
    } _: {
      $0.connectionClosed(reason: reason, at: now)
    } _: {
      $0.connectionClosed(reason: reason, at: now)
    }
  }

  /// Bytes read from the control port (1.X: one read, judged as one message).
  public mutating func receive(_ bytes: [UInt8], at now: Double) -> OnionBrowserOutput {
    apply {
      $0.receive(bytes, at: now)
    } _: {
      $0.receive(bytes, at: now)
    } _: {
      $0.receive(bytes, at: now)
    }
  }

  public mutating func tick(at now: Double) -> OnionBrowserOutput {
    apply {
      $0.tick(at: now)
    } _: {
      $0.tick(at: now)
    } _: {
      $0.tick(at: now)
    }
  }

  /// The device's network changed; `reachable` false when it went away.
  public mutating func networkChanged(reachable: Bool = true, at now: Double) -> OnionBrowserOutput
  {
    apply {
      $0.networkChanged(reachable: reachable, at: now)
    } _: {
      $0.networkChanged(reachable: reachable, at: now)
    } _: {
      $0.networkChanged(reachable: reachable, at: now)
    }
  }

  /// The app went to the background: 1.X closes its control connection (and exits before the
  /// first 100 %), 2.X stops tor (SIGNAL SHUTDOWN), 3.X does nothing to tor.
  public mutating func background(at now: Double) -> OnionBrowserOutput {
    apply {
      $0.background(at: now)
    } _: {
      $0.stop(at: now)
    } _: { _ in
      OnionBrowserOutput()
    }
  }

  /// The app became active again: 1.X reconnects 0.25 s later. (2.X starts tor afresh if it
  /// was stopped: a new tor and a new controller, the edge's business; 3.X nothing.)
  public mutating func foreground(at now: Double) -> OnionBrowserOutput {
    apply {
      $0.foreground(at: now)
    } _: { _ in
      OnionBrowserOutput()
    } _: { _ in
      OnionBrowserOutput()
    }
  }

  /// The app ends: 1.X and 2.X send nothing (tor dies with the process: 2.X's
  /// applicationWillTerminate, AppDelegate.swift @9a17dd4f l.296-301, leaves OnionManager
  /// alone; the connection closes with the app), 3.X SIGNAL SHUTDOWN (AppDelegate.swift
  /// @44edf9a8 l.102). Onion Browser's own code showed the 2.X rule
  /// (docs/onion-browser-source.md, "Model and code").
  public mutating func terminate(at now: Double) -> OnionBrowserOutput {
    apply {
      $0.terminate(at: now)
    } _: { _ in
      var out = OnionBrowserOutput()
      out.close = true
      return out
    } _: {
      $0.stop(at: now)
    }
  }

  public var nextDeadline: Double? {
    switch core {
    case .v1(let c): return c.nextDeadline
    case .v2(let c): return c.nextDeadline
    case .v3(let c): return c.nextDeadline
    }
  }

  /// The latest bootstrap phase reported.
  public var phase: BootstrapPhase? {
    switch core {
    case .v1(let c): return c.phase
    case .v2(let c): return c.phase
    case .v3(let c): return c.phase
    }
  }

  private mutating func apply(
    _ one: (inout OnionBrowser1Controller) -> OnionBrowserOutput,
    _ two: (inout OnionBrowser2Controller) -> OnionBrowserOutput,
    _ three: (inout OnionBrowser3Controller) -> OnionBrowserOutput
  ) -> OnionBrowserOutput {
    switch core {
    case .v1(var c):
      let out = one(&c)
      core = .v1(c)
      return out
    case .v2(var c):
      let out = two(&c)
      core = .v2(c)
      return out
    case .v3(var c):
      let out = three(&c)
      core = .v3(c)
      return out
    }
  }
}
