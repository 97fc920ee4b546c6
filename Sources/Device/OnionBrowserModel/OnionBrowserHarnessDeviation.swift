import TorControl

/// The one place where the harness's tor differs from the tor inside Onion Browser, and the
/// controller's extra steps for it. None of these is Onion Browser's: every version runs tor
/// inside the app's own process (1.X TorWrapper.m's TORThread, 2.X OnionManager.swift's
/// TorThread, 3.X TorManager.swift's TorThread), with no DisableNetwork in its configuration.
/// The harness runs tor as a separate process (Debian's tor, or the mock's ctor personality)
/// and starts it with `DisableNetwork 1`, so nothing leaves before the app's controller is
/// there. Each step shows as a `command` event like the app's own; this type names them.
///
/// One more difference lives at the edge, not here: the AUTHENTICATE secret. 1.X authenticates
/// with the password "onionbrowser" (TorController.m l.257; its torrc's HashedControlPassword),
/// 2.X/3.X with tor's cookie (Tor.framework authenticateWithData); the harness's tor takes
/// its cookie (Debian's tor) or nothing (the mock), and every version sends that.
public struct OnionBrowserHarnessDeviation: Hashable, Sendable {
  /// `SETCONF DisableNetwork=0` once the app's own setup is done (1.X: after each successful
  /// AUTHENTICATE; 2.X/3.X: after GETINFO status/circuit-established was answered, so the
  /// observers are in place before tor's first event, as in the app, whose tor has been
  /// bootstrapping for a second when its controller connects), and (2.X/3.X) after tor
  /// answered a SIGNAL RELOAD: the harness's torrc says `DisableNetwork 1` and a reload (or
  /// 1.X's HUP, after which 1.X re-authenticates) re-applies it. Debian's tor 0.4.9.11 answers
  /// the signal first and reloads on its next loop turn, so a SETCONF written with the signal
  /// is undone; one written after the answer sticks.
  public var enableNetwork: Bool
  /// `TAKEOWNERSHIP` after authenticating (2.X/3.X only, when the harness launched tor): tor
  /// dies with the app's process in Onion Browser; TAKEOWNERSHIP makes the harness's tor exit
  /// when the app's control connection closes. Never for 1.X, which closes and reopens its
  /// control connection (background, HUP) while its tor keeps running: there the torrc's
  /// `__OwningControllerProcess` (the app's PID) ties tor to the app instead.
  public var takeOwnership: Bool
  /// 1.X reconnects at once when its control connection fails or closes; with nothing
  /// listening that is a busy loop. The harness waits at least this long between attempts.
  public var reconnectFloor: Double

  public init(
    enableNetwork: Bool = true, takeOwnership: Bool = false, reconnectFloor: Double = 0.25
  ) {
    self.enableNetwork = enableNetwork
    self.takeOwnership = takeOwnership
    self.reconnectFloor = reconnectFloor
  }

  /// Onion Browser's own sequence, nothing added (tests of the app's rules).
  public static let none = OnionBrowserHarnessDeviation(
    enableNetwork: false, takeOwnership: false, reconnectFloor: 0)

  public static let enableNetworkCommand = "SETCONF DisableNetwork=0"
}
