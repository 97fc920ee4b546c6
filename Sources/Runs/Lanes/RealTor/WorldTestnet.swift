import Audit
import FailClosedSupport
import Foundation
import Sandbox
import Testnet

/// The private Tor network placed in a sandbox's world namespace: one address per node on the
/// world's loopback (the censor reaches them across the world link), every tor started with
/// `ip netns exec <world>`, so on the device's link each relay is a distinct destination.
public final class WorldTestnet: @unchecked Sendable {
  /// One address per node: three authorities, exit, middle, bridge; inside
  /// `AddressPlan.ownProgramsBlockV4`, so the world's port redirect leaves them alone.
  public static let nodeAddresses = (101...106).map { "10.66.1.\($0)" }

  public let sandbox: SandboxRun
  public let network: TorNetwork
  public private(set) var consensus: Consensus?
  public private(set) var readySeconds: Double = 0

  public init(sandbox: SandboxRun, directory: String) {
    self.sandbox = sandbox
    network = TorNetwork(
      plan: .world(addresses: WorldTestnet.nodeAddresses), directory: directory,
      prefix: ["ip", "netns", "exec", sandbox.world.name])
  }

  /// Adds the node addresses, generates keys and torrcs, starts every tor (recorded with the
  /// sandbox so its teardown stops them too) and waits until the consensus lists every relay.
  public func start(timeout: Double = 120) async throws {
    let clock = SystemClock()
    let world = sandbox.world.name
    try await BlockingIO.run("testnet.addresses") {
      for address in WorldTestnet.nodeAddresses {
        try CommandRunner.run(["ip", "-n", world, "addr", "add", "\(address)/32", "dev", "lo"])
      }
    }
    try network.prepare()
    try network.start()
    for pid in network.pids.values { sandbox.recordProcess(pid, group: false) }
    consensus = try await network.waitUntilReady(timeout: timeout)
    readySeconds = clock.now
  }

  /// ORPorts and DirPorts from the consensus, and the bridge's obfs4 port, each with what
  /// listens there: the audit's allowlist, as Tails and Whonix build theirs, typed.
  public func allowlist() throws -> AllowedEndpoints {
    AllowedEndpoints(
      try network.contactPoints().compactMap { point in
        Endpoint(point.endpoint).map { ($0, EndpointRole(point.kind)) }
      })
  }

  public func stop() { network.stop() }
}
