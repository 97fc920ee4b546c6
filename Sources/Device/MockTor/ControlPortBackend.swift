import FailClosedSupport
import TorControl

/// What a ``ControlPortListener`` needs from the Tor it fronts. MockTor adopts it (or hands the
/// listener a ``BootstrapDriver``, which does); tests can supply their own.
public protocol ControlPortBackend: AnyObject, Sendable {
  /// The live values GETINFO and GETCONF answer from, read before each batch of commands.
  func controlContext() -> ControlContext
  /// SETCONF/RESETCONF DisableNetwork.
  func setDisableNetwork(_ disabled: Bool)
  /// A SIGNAL by name (NEWNYM, RELOAD, HUP, SHUTDOWN, ...), after its "250 OK" was queued.
  func controlSignal(_ name: String)
  /// Every command handled, for the event log (AUTHENTICATE secrets already scrubbed).
  func controlCommandHandled(_ record: ControlCommandRecord, peer: SocketAddress?)
}
