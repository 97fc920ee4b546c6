/// Onion Browser's numbers, in seconds of the controller's clock.
public struct OnionBrowserTimings: Hashable, Sendable {
  /// 1.X TorController: `getinfo status/bootstrap-phase` again 0.15 s after each answer, until
  /// PROGRESS=100.
  public var bootstrapPoll: Double = 0.15
  /// 1.X: after 100 %, `getinfo orconn-status` 5.0 s after each good answer.
  public var heartbeatInterval: Double = 5.0
  /// 1.X STATUS_CHECK_TIMEOUT: no heartbeat answer within 3.0 s means SIGNAL HUP.
  public var heartbeatTimeout: Double = 3.0
  /// 1.X hupTor: the check loop restarts 1.0 s after a HUP and sends the heartbeat 0.15 s after
  /// re-authenticating, so the next heartbeat follows a HUP by 1.15 s.
  public var heartbeatAfterHUP: Double = 1.15
  /// 2.X OnionManager: no bootstrap report for 15 s means DisableNetwork=1 then =0 (not with
  /// bridges).
  public var stallGuard: Double = 15.0

  public init() {}
}
