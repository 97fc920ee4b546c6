import FailClosedSupport
import Foundation
import MockTor
import SOCKS

/// The mock Tor's upstream inside the sandbox: every stream the mock accepts goes through a
/// guard of the fake Tor network (see ``GuardTunnel``), so on the wire the device's Tor
/// traffic is one TCP connection per stream to a guard's {address, port}, and nothing else.
public struct GuardUpstream: MockTorUpstream {
  public let client: GuardTunnelClient

  public init(client: GuardTunnelClient) { self.client = client }

  /// The exit resolves as the world's resolver does (FakeResolver: every name to the web
  /// host), so a client that asks Tor to resolve (torsocks' RESOLVE) gets the answer a direct
  /// question would have had, without asking in clear.
  public func resolve(_ name: String) -> SOCKSAddress? {
    SOCKSAddress.parseIPv4(AddressPlan.webHostV4).map { .ipv4($0) }
  }

  public func connect(to address: SOCKSAddress, port: UInt16) throws -> Socket {
    let host: String
    switch address {
    case .ipv4(let bytes), .ipv6(let bytes): host = SocketAddress.formatIP(bytes)
    case .hostname(let name): host = name
    }
    do {
      return try client.open(host: host, port: port)
    } catch let refused as GuardTunnelClient.Refused {
      throw MockTorUpstreamFailure(
        reply: refused.status == GuardTunnel.Status.unreachable.rawValue
          ? .hostUnreachable : .generalFailure)
    } catch {
      throw MockTorUpstreamFailure(reply: .networkUnreachable)
    }
  }
}

extension SandboxRun {
  /// Starts the mock Tor (C tor personality, bootstrapped at once) with its SOCKS port on
  /// 127.0.0.1:39050 inside the device, streams tunnelled to the guards. Blocking; the mock
  /// stops at teardown (or through the returned closure).
  @discardableResult
  public func startMockTor(
    configure: @Sendable (inout MockTorConfiguration) -> Void = { _ in }
  ) throws -> MockTor {
    var configuration = MockTorConfiguration(
      personality: .ctor, socksAddress: MockTorConfiguration.defaultSOCKSAddress,
      bootstrapPlan: .healthy(after: 0),
      upstream: GuardUpstream(client: GuardTunnelClient(device: device)))
    configure(&configuration)
    let mock = try MockTor(configuration)
    // The listener is bound on this thread, inside the device: its socket lives there.
    try device.perform { try mock.start() }
    recordService("mock-tor") { mock.stop() }
    return mock
  }
}

extension SandboxExec {
  /// The default Tor stand-in for `failclosed exec`: the mock Tor in the device. Names in
  /// `resolvable` answer Tor's RESOLVE (with the mock's virtual addresses), as torsocks needs;
  /// streams to any name work either way.
  public static func mockTorStarter(resolvable: [String] = []) -> TorStarter {
    { run in
      let web = SocketAddress(host: AddressPlan.webHostV4, port: 80)!
      let mock = try run.startMockTor { configuration in
        for name in resolvable { configuration.destinations.add(name, web) }
      }
      return { mock.stop() }
    }
  }
}
