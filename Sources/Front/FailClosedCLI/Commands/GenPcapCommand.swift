import Audit
import Capture
import FailClosedSupport
import Foundation
import SyntheticTraffic

/// `failclosed gen-pcap FILE`: writes a synthetic capture for benchmarks (issue 7).
public struct GenPcapCommand: Command {
  public init() {}
  public let name = "gen-pcap"
  public let summary = "write a synthetic mixed-traffic capture (benchmarks)"
  public let usage = """
    Usage: failclosed gen-pcap FILE.pcap [--packets N] [--leak-every N] [--link TYPE]

    Writes N packets of Tor-like TLS over TCP to three guards (two IPv4, one IPv6), both
    directions, with link control every 997 packets and one leak every --leak-every packets
    rotating through DNS (UDP 53, mDNS, DNS over TLS), tcp, udp, icmp, ipv6, multicast (SSDP),
    other-protocol (GRE) and clear-on-tor-endpoint (clear HTTP in a SYN to a guard). Each
    connection to a guard opens with a SYN and a ClientHello and its cells follow in
    sequence, so the audit's content check follows every one. Prints the --allow arguments
    that make the Tor traffic allowed, and leak filters by address and port for tshark and
    tcpdump (which cannot see the clear-on-tor-endpoint leak: it goes to a guard's port). Timestamps start at 2023-11-14T22:13:20Z, 10 microseconds apart.
    """
  public let options: [OptionSpec] = [
    OptionSpec("packets", .single, valueName: "N", help: "packets to write (default 1000000)"),
    OptionSpec(
      "leak-every", .single, valueName: "N", help: "one leak every N packets (default 1000)"),
    OptionSpec(
      "link", .single, valueName: "TYPE",
      help: "ethernet (default), sll, sll2 or raw"),
  ]

  public func run(_ arguments: ParsedArguments) async throws -> Int32 {
    guard arguments.positional.count == 1, let path = arguments.positional.first else {
      throw UsageError("expected one FILE.pcap")
    }
    let count = try arguments.integer("packets", in: 1...1_000_000_000) ?? 1_000_000
    let leakEvery = try arguments.integer("leak-every", in: 1...1_000_000_000) ?? 1000
    let linkType: LinkType
    switch arguments.value("link") ?? "ethernet" {
    case "ethernet": linkType = .ethernet
    case "sll": linkType = .linuxSLL
    case "sll2": linkType = .linuxSLL2
    case "raw": linkType = .raw
    case let other:
      throw UsageError("--link: expected ethernet, sll, sll2 or raw, got '\(other)'")
    }
    do {
      try await BlockingIO.run("failclosed.gen-pcap") {
        let writer = try PcapWriter(path: path, linkType: linkType)
        var generator = TrafficGenerator(linkType: linkType, leakEvery: leakEvery)
        let start: Int64 = 1_700_000_000_000_000_000
        for index in 0..<count {
          generator.packet(index) { frame in
            writer.write(
              timestamp: start + Int64(index) * 10_000, wireLength: frame.count, frame: frame)
          }
        }
        writer.close()
      }
    } catch let error as CaptureError {
      FailClosedMain.printError("failclosed gen-pcap: \(error.message)")
      return ExitCode.inconclusive
    }
    // The device's MAC gives Ethernet frames their direction (cooked files carry their own).
    let allow =
      (TrafficGenerator.guards.map { "--allow \($0)" } + ["--device-mac 02:00:00:00:00:01"])
      .joined(separator: " ")
    print("wrote \(count) packets to \(path)")
    print("allow: \(allow)")
    print("tshark leak filter: \(Self.tsharkFilter)")
    print("tcpdump leak filter: \(Self.bpfFilter)")
    return ExitCode.pass
  }

  /// Packets that are neither guard traffic nor link control (what the audit calls leaks).
  public static var tsharkFilter: String {
    let allowed = TrafficGenerator.guards.map { endpoint in
      let field = endpoint.address.isIPv6 ? "ipv6" : "ip"
      return
        "(\(field).addr==\(endpoint.address) && tcp.port==\(endpoint.port))"
    }.joined(separator: " || ")
    return "!(\(allowed)) && !arp && !(icmpv6.type>=133 && icmpv6.type<=137)"
  }

  public static var bpfFilter: String {
    let allowed = TrafficGenerator.guards.map { "(host \($0.address) and tcp port \($0.port))" }
      .joined(separator: " or ")
    return "not (\(allowed)) and not arp and not (icmp6 and ip6[40] >= 133 and ip6[40] <= 137)"
  }
}
