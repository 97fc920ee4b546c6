import FailClosedSupport
import Foundation
import Glibc

/// How the world's own servers (HTTP, HTTPS, the catch-all echo) treat whoever connects: a
/// broken or hostile Internet. The fake Tor network's guards are not affected (the Tor side's
/// faults are the mock's stream faults).
public enum WorldFault: String, Sendable, CaseIterable {
  case none
  /// Closed with a TCP reset at once.
  case reset
  /// Accepted, read, never answered (until the peer gives up or the world stops).
  case stall
  /// 512 random bytes instead of an answer, then closed.
  case garbage

  /// Applies the fault to a fresh connection; true when it did (the service's own answer must
  /// not follow).
  func apply(to connection: Socket) -> Bool {
    switch self {
    case .none:
      return false
    case .reset:
      // The close that follows sends RST, not FIN.
      connection.resetOnClose()
      return true
    case .stall:
      while let bytes = try? connection.read(), !bytes.isEmpty {}
      return true
    case .garbage:
      var generator = SystemRandomNumberGenerator()
      _ = try? connection.write((0..<512).map { _ in UInt8.random(in: 0...255, using: &generator) })
      return true
    }
  }
}
