import FailClosedSupport

/// The sandbox's addresses. Every run uses the same plan: runs are isolated from each other by
/// their namespaces, so the addresses never meet. No address here exists outside them.
///
///     device ns                  censor ns                       world ns
///     eth0 10.66.0.2/24   <->    dev0 10.66.0.1/24
///          fd66::2/64                 fd66::1/64
///                                wld0 10.66.1.1/24       <->     eth0 10.66.1.2/24
///                                     fd66:0:0:1::1/64                fd66:0:0:1::2/64
///
/// The world's services hold further addresses on its loopback: 10.66.1.53 (resolver),
/// 10.66.1.80 (web host), 10.66.1.10 (guard), and in IPv6 fd66:0:0:2::53 and fd66:0:0:2::80,
/// outside the link's /64 so the censor routes to them instead of asking for them on the link.
///
/// A slot (a further device and censor pair sharing the world, ``SandboxRun/createSlot(_:)``)
/// repeats the device side exactly (the audit sees the same addresses in every slot); its
/// censor's world link is a subnet of its own, 10.66.(16+k).0/24 and fd66:0:0:(16+k)::/64
/// (censor .1, world .2, on the world's eth<k>), and the censor masquerades the device
/// behind its world-side address, so the world's replies find their way back to the slot.
///
/// The device's default routes (v4 and v6) point at the censor, the censor forwards and routes
/// everything else to the world, and the world accepts any destination address arriving on its
/// link as local (an "AnyIP" route in a table of its own), so a direct connect to any address
/// from the device gets a real answer from the world's services, and is captured on the way.
public enum AddressPlan {
  public static let deviceV4 = "10.66.0.2"
  public static let censorDeviceSideV4 = "10.66.0.1"
  public static let censorWorldSideV4 = "10.66.1.1"
  public static let worldV4 = "10.66.1.2"
  public static let deviceV6 = "fd66::2"
  public static let censorDeviceSideV6 = "fd66::1"
  public static let censorWorldSideV6 = "fd66:0:0:1::1"
  public static let worldV6 = "fd66:0:0:1::2"
  public static let prefixV4 = 24
  public static let prefixV6 = 64

  /// The world resolver, named in the device's resolv.conf.
  public static let resolverV4 = "10.66.1.53"
  /// The address the world resolver gives every name (A), and its IPv6 twin (AAAA).
  public static let webHostV4 = "10.66.1.80"
  public static let webHostV6 = "fd66:0:0:2::80"
  /// The fake Tor network's guards: on the wire, Tor traffic goes to these and nowhere else.
  public static let guards: [SocketAddress] = [SocketAddress("10.66.1.10:9001")!]
  /// World hosts that run real programs of their own (the real-Tor lane's private network,
  /// 10.66.1.101-106): the world's catch-all port redirect leaves them alone.
  public static let ownProgramsBlockV4 = "10.66.1.96/27"
  /// The positive-control packet's destination: the censor's device-side address.
  public static let controlTarget = SocketAddress("10.66.0.1:9")!

  /// The most slots a run may have (their links fit 10.66.16.0/20).
  public static let maximumSlots = 15
  /// Where the world's links to slots lie: not local to the world's AnyIP.
  static let slotLinksBlockV4 = "10.66.16.0/20"

  /// Slot `slot`'s censor-world link: `host` 1 is the censor, 2 the world (slot nil: the
  /// run's own link, 10.66.1.0/24).
  static func worldLinkV4(slot: Int?, host: Int) -> String {
    "10.66.\(slot.map { 16 + $0 } ?? 1).\(host)"
  }

  static func worldLinkV6(slot: Int?, host: Int) -> String {
    "fd66:0:0:\(String(slot.map { 16 + $0 } ?? 1, radix: 16))::\(host)"
  }

  /// The device's network interface, the one the capture opens.
  public static let deviceInterface = "eth0"
  /// The censor's end of the device's link (every pair has its own, in its own censor
  /// namespace), where the wire capture opens: it sees what the device sends even when the
  /// device's own packet taps are bypassed.
  public static let censorDeviceInterface = "dev0"
}
