import FailClosedSupport
import Foundation

extension SandboxRun {
  /// The device's addresses as the world sees them: its own for the run's own pair, the
  /// censor's world-side addresses for a slot (its censor masquerades the device).
  public var deviceAddressesInWorld: [String] {
    guard let slot = names.slot else { return [AddressPlan.deviceV4, AddressPlan.deviceV6] }
    return [
      AddressPlan.worldLinkV4(slot: slot, host: 1), AddressPlan.worldLinkV6(slot: slot, host: 1),
    ]
  }

  /// Ends every TCP connection the world still holds with this pair's device (SOCK_DESTROY
  /// through `ss -K`, in the world namespace): a pair that outlives its scenario (a real-Tor
  /// slot, a soak) must not hand the next scenario the last one's connections. A relay whose
  /// client went away behind the censor's drop rules kept its connection, and minutes later
  /// its keepalive reached the same address in the next scenario, whose device answered with a
  /// reset: a flow to a relay in a bridge-only run (the soak's real phase, from round 3).
  /// Returns how many were closed; throws when `ss` cannot (a kernel without
  /// CONFIG_INET_DIAG_DESTROY says so).
  @discardableResult
  public func closeWorldConnections() throws -> Int {
    var closed = 0
    for address in deviceAddressesInWorld {
      let output = try Spawner.capture([
        // ss reads an IPv6 address in brackets.
        "ip", "netns", "exec", names.world, "ss", "-K", "-t", "-n", "dst",
        address.contains(":") ? "[\(address)]" : address,
      ])
      guard output.status == 0 else {
        throw SystemError(
          "ss -K dst \(address) in \(names.world): " + output.stderr.prefix(200), code: 0)
      }
      // ss prints a header, then one line per socket it destroyed.
      closed += output.stdout.split(separator: "\n").dropFirst().count
    }
    return closed
  }
}
