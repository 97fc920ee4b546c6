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

  /// The device's network interface, the one the capture opens.
  public static let deviceInterface = "eth0"
}
