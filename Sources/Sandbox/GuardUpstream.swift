import FailClosedSupport
import MockTor
import SOCKS

/// The mock Tor's upstream in the sandbox: every stream travels to the fake Tor network's guard
/// through a ``GuardTunnelClient``, so on the device's link Tor traffic is only {guard, port},
/// and the world (not the device) resolves the names.
public struct GuardUpstream: MockTorUpstream {
  public let client: GuardTunnelClient

  public init(client: GuardTunnelClient) { self.client = client }

  public func connect(to address: SOCKSAddress, port: UInt16) throws -> Socket {
    do {
      return try client.open(host: address.description, port: port)
    } catch is GuardTunnelClient.Refused {
      // The guard could not reach the destination: tor answers "connection refused" (0x05).
      throw MockTorUpstreamFailure(reply: .connectionRefused)
    }
  }
}
