import FailClosedSupport
import SOCKS

/// Where streams go instead of the destination map: given the destination the client asked
/// for, return a connected socket (the sandbox tunnels it to a fake guard), or throw a
/// ``MockTorUpstreamFailure`` to choose the SOCKS reply.
public protocol MockTorUpstream: Sendable {
  func connect(to address: SOCKSAddress, port: UInt16) throws -> Socket
  /// What the exit's resolver answers for `name` (tor's RESOLVE), or nil when it has no answer
  /// (the default: only the mock's own map answers).
  func resolve(_ name: String) -> SOCKSAddress?
}

extension MockTorUpstream {
  public func resolve(_ name: String) -> SOCKSAddress? { nil }
}

/// An upstream's refusal, mapped to a reply code the way tor maps end reasons.
public struct MockTorUpstreamFailure: Error, Sendable {
  public let reply: SOCKSReplyCode
  public init(reply: SOCKSReplyCode) { self.reply = reply }
}
