import TorControl

/// Onion Browser's numbers, in seconds of the controller's clock.
public struct OnionBrowserTimings: Hashable, Sendable {
  /// 1.X TorController.m l.85-89: the first control connection 0.15 s after startTor.
  public var firstCheck: Double = 0.15
  /// 1.X TorController.m l.286-290, l.353-357: `getinfo status/bootstrap-phase` again 0.15 s
  /// after authenticating and after each answer below 100 %.
  public var bootstrapPoll: Double = 0.15
  /// 1.X TorController.m l.344-348, l.379-383: `getinfo orconn-status` 5.0 s after 100 % and
  /// after each good answer.
  public var heartbeatInterval: Double = 5.0
  /// 1.X TorController.m l.16 STATUS_CHECK_TIMEOUT: no heartbeat answer within 3.0 s means HUP.
  public var heartbeatTimeout: Double = 3.0
  /// 1.X TorController.m l.101-105: reconnect 1.0 s after SIGNAL HUP.
  public var reconnectAfterHUP: Double = 1.0
  /// 1.X TorController.m l.308-312: HUP 2.5 s after a failed AUTHENTICATE (once connected).
  public var hupAfterFailedAuthentication: Double = 2.5
  /// 1.X TorController.m l.163-167: reconnect 0.25 s after the app becomes active.
  public var reconnectWhenActive: Double = 0.25
  /// 2.X OnionManager.swift l.221: the controller connects 1 s after startTor.
  public var connectDelay2: Double = 1.0
  /// 3.X TorManager.swift l.114: 0.65 s after start.
  public var connectDelay3: Double = 0.65
  /// 2.X OnionManager.swift l.445-447: 15 s without a bootstrap event means difficulties.
  public var stallGuard: Double = 15.0
  /// 2.X OnionManager.swift l.343-344: the guard looks once a second, the first time 1 s in.
  public var stallGuardCheck: Double = 1.0

  public init() {}
}
