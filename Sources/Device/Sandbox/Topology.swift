import FailClosedSupport
import Foundation

/// The `ip` commands that build the three namespaces and their links (see ``AddressPlan``).
/// Pure: the commands are data, so a test can read them and the run can execute them.
enum Topology {
  typealias Plan = AddressPlan

  /// Veth pairs are created directly inside their namespaces, so no veth ever exists in the
  /// root namespace, and deleting the namespaces deletes them. The device's link carries one
  /// segment per packet (`gso_max_segs 1`): the captures on it (snap length 2048) then hold
  /// every byte the device sends, which the audit's content check of Tor flows follows; with
  /// GSO the kernel hands them segments of up to 64 KiB, cut at the snap length.
  static func linkCommands(_ names: SandboxNames) -> [[String]] {
    [
      [
        "ip", "link", "add", "name", "eth0", "netns", names.device, "gso_max_segs", "1", "type",
        "veth", "peer", "name", "dev0", "netns", names.censor, "gso_max_segs", "1",
      ],
      [
        "ip", "link", "add", "name", "wld0", "netns", names.censor, "type", "veth", "peer", "name",
        names.worldLink, "netns", names.world,
      ],
    ]
  }

  /// One `ip -batch` script per namespace, in order; `family` is "-6" for rules that need it.
  static func batches(_ names: SandboxNames) -> [(
    namespace: String, family: String?, lines: [String]
  )] {
    let v4 = "/\(Plan.prefixV4)"
    let v6 = "/\(Plan.prefixV6)"
    let censorWorldV4 = Plan.worldLinkV4(slot: names.slot, host: 1)
    let censorWorldV6 = Plan.worldLinkV6(slot: names.slot, host: 1)
    let worldV4 = Plan.worldLinkV4(slot: names.slot, host: 2)
    let worldV6 = Plan.worldLinkV6(slot: names.slot, host: 2)
    let pair: [(namespace: String, family: String?, lines: [String])] = [
      (
        names.device, nil,
        [
          "link set lo up",
          "link set eth0 up",
          "addr add \(Plan.deviceV4)\(v4) dev eth0",
          "addr add \(Plan.deviceV6)\(v6) dev eth0 nodad",
          "route add default via \(Plan.censorDeviceSideV4)",
          "route add ::/0 via \(Plan.censorDeviceSideV6)",
        ]
      ),
      (
        names.censor, nil,
        [
          "link set lo up",
          "link set dev0 up",
          "link set wld0 up",
          "addr add \(Plan.censorDeviceSideV4)\(v4) dev dev0",
          "addr add \(Plan.censorDeviceSideV6)\(v6) dev dev0 nodad",
          "addr add \(censorWorldV4)\(v4) dev wld0",
          "addr add \(censorWorldV6)\(v6) dev wld0 nodad",
          "route add default via \(worldV4)",
          "route add ::/0 via \(worldV6)",
        ]
      ),
    ]
    guard names.slot == nil else {
      // A slot's end in the run's world: its link, kept out of the AnyIP (replies to the
      // slot's censor leave by the link) and, in IPv6, into the AnyIP table like eth0.
      let link = names.worldLink
      return pair + [
        (
          names.world, nil,
          [
            "link set \(link) up",
            "addr add \(worldV4)\(v4) dev \(link)",
            "addr add \(worldV6)\(v6) dev \(link) nodad",
            "route replace throw \(Plan.slotLinksBlockV4) table local",
          ]
        ),
        (names.world, "-6", ["rule add iif \(link) lookup 100 pref 100"]),
      ]
    }
    return pair + [
      (
        names.world, nil,
        [
          "link set lo up",
          "link set eth0 up",
          "addr add \(worldV4)\(v4) dev eth0",
          "addr add \(worldV6)\(v6) dev eth0 nodad",
          "route add default via \(censorWorldV4)",
          "route add ::/0 via \(censorWorldV6)",
          // AnyIP: every IPv4 address is local to the world except the two links' (thrown
          // back to the main table), so a connect to any address gets the world's answer. It
          // must be the local table: replies from such an address need it to count as local.
          // A rule of our own unmerges the local and main tables, without which the kernel
          // treats a throw in the merged table as "unreachable".
          "rule add pref 32765 lookup main",
          "route add local 0.0.0.0/0 dev lo table local",
          "route add throw 10.66.0.0/23 table local",
        ]
      ),
      (
        // IPv6 AnyIP: destinations arriving on the link are local (a table of its own works
        // here, since IPv6 replies need no local-address check).
        names.world, "-6",
        [
          "rule add iif eth0 lookup 100 pref 100",
          "route add local ::/0 dev lo table 100",
        ]
      ),
    ]
  }

  /// A slot's censor hides its device behind the censor's world-side address: every slot's
  /// device is 10.66.0.2, so only that address tells the world which link to answer on.
  static func masquerade(_ names: SandboxNames) -> String {
    """
    table inet \(names.masqueradeTable) {
      chain postrouting {
        type nat hook postrouting priority srcnat; policy accept;
        oifname "wld0" masquerade
      }
    }

    """
  }

  /// Kernel settings per namespace, written from a thread inside it (/proc/sys/net follows the
  /// writer's namespace).
  /// Set before the links exist, so new interfaces inherit the defaults: no duplicate address
  /// detection (addresses are usable at once, no tentative link-local address delays
  /// neighbour discovery for a second).
  static func sysctls(_ names: SandboxNames) -> [(namespace: String, path: String, value: String)] {
    var settings: [(namespace: String, path: String, value: String)] = []
    for namespace in names.namespaces {
      settings.append((namespace, "/proc/sys/net/ipv6/conf/default/accept_dad", "0"))
      settings.append((namespace, "/proc/sys/net/ipv6/conf/all/accept_dad", "0"))
    }
    // The device's ephemeral ports as on iOS and macOS (49152-65535), clear of the Tor side's
    // ports (39050, 39051, 9050, 9051). In Linux's range (32768-60999) a probe of 127.0.0.1:39050
    // while nothing listens there could pick 39050 as its own source port and connect to itself
    // (TCP's simultaneous open), leaving the port in TIME_WAIT for 60 s: the mock's bind at its
    // bootstrap's end then failed, and the run, a few real seconds long, never got its Tor.
    settings.append((names.device, "/proc/sys/net/ipv4/ip_local_port_range", "49152 65535"))
    settings.append((names.censor, "/proc/sys/net/ipv4/ip_forward", "1"))
    settings.append((names.censor, "/proc/sys/net/ipv6/conf/all/forwarding", "1"))
    return settings
  }

  static func resolvConf() -> String {
    "# failclosed: the world resolver, reached through the censor\nnameserver \(Plan.resolverV4)\n"
  }
}
