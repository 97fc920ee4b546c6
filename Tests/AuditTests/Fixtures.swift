import Audit
import SyntheticTraffic

/// Addresses and frames shared by the audit tests: a device, an allowed Tor guard, and one
/// canary per leak class.
enum Fixtures {
  static let device = IPAddress("10.66.0.2")!
  static let device6 = IPAddress("fd66::2")!
  static let guardEndpoint = Endpoint("10.66.1.10:9001")!
  static let world = IPAddress("10.66.1.20")!
  static let world6 = IPAddress("fd66:1::20")!
  static let probe = SyncProbe(
    destination: Endpoint("10.66.1.1:9")!, payload: nil)

  static func endpoint(_ address: IPAddress, _ port: UInt16) -> Endpoint {
    Endpoint(address: address, port: port)
  }

  /// The policy as the sandbox gives it: the guard allowed, the device's addresses and MAC
  /// (Ethernet frames get their direction from the MAC, cooked ones carry it).
  static let policy = AuditPolicy(
    allowed: [(guardEndpoint, .orPort)], deviceAddresses: [device, device6],
    deviceLinkAddresses: [FrameBuilder.deviceMACValue],
    linkNetworks: [IPNetwork("10.66.0.0/24")!, IPNetwork("fd66::/64")!])
  /// The policy with nothing known of the device: only the allowlist.
  static let bare = AuditPolicy(allowed: [(guardEndpoint, .orPort)])

  /// An IP packet for each leak class, named by the class it must be reported as.
  static let canaries: [(String, LeakClass, [UInt8])] = [
    (
      "udp dns query", .dns,
      FrameBuilder.udpPacket(
        from: endpoint(device, 40000), to: endpoint(world, 53),
        payload: FrameBuilder.dnsQuery(name: "leak.example"))
    ),
    (
      "tcp dns query", .dns,
      FrameBuilder.tcpPacket(
        from: endpoint(device, 40001), to: endpoint(world, 53),
        payload: FrameBuilder.be16(29) + FrameBuilder.dnsQuery(name: "tcp.example"))
    ),
    (
      "dns over tls", .dns,
      FrameBuilder.tcpPacket(from: endpoint(device, 40002), to: endpoint(world, 853), flags: 0x02)
    ),
    (
      "mdns", .dns,
      FrameBuilder.udpPacket(
        from: endpoint(device, 5353), to: endpoint(IPAddress("224.0.0.251")!, 5353),
        payload: FrameBuilder.dnsQuery(name: "printer.local"))
    ),
    (
      "llmnr", .dns,
      FrameBuilder.udpPacket(
        from: endpoint(device, 40003), to: endpoint(IPAddress("224.0.0.252")!, 5355),
        payload: FrameBuilder.dnsQuery(name: "wpad"))
    ),
    (
      "tcp connect", .tcp,
      FrameBuilder.tcpPacket(from: endpoint(device, 40004), to: endpoint(world, 443), flags: 0x02)
    ),
    (
      "tcp to the guard address on another port", .tcp,
      FrameBuilder.tcpPacket(
        from: endpoint(device, 40005), to: endpoint(guardEndpoint.address, 443), flags: 0x02)
    ),
    (
      "udp", .udp,
      FrameBuilder.udpPacket(
        from: endpoint(device, 40006), to: endpoint(world, 4444), payload: [1, 2, 3])
    ),
    (
      "icmp echo", .icmp,
      FrameBuilder.ip(
        source: device, destination: world, proto: IPProtocolNumber.icmp,
        payload: FrameBuilder.icmp(type: 8))
    ),
    (
      "ipv6 udp", .ipv6,
      FrameBuilder.udpPacket(
        from: endpoint(device6, 40007), to: endpoint(world6, 4444), payload: [1])
    ),
    (
      "ipv6 icmp echo", .ipv6,
      FrameBuilder.ip(
        source: device6, destination: world6, proto: IPProtocolNumber.icmpv6,
        payload: FrameBuilder.icmp(type: 128))
    ),
    (
      "ipv6 dns", .dns,
      FrameBuilder.udpPacket(
        from: endpoint(device6, 40008), to: endpoint(world6, 53),
        payload: FrameBuilder.dnsQuery(name: "six.example", type: 28))
    ),
    (
      "udp multicast", .multicast,
      FrameBuilder.udpPacket(
        from: endpoint(device, 40009), to: endpoint(IPAddress("239.255.255.250")!, 1900),
        payload: Array("M-SEARCH".utf8))
    ),
    (
      "udp broadcast", .multicast,
      FrameBuilder.udpPacket(
        from: endpoint(device, 68), to: endpoint(IPAddress("255.255.255.255")!, 67),
        payload: [1])
    ),
    (
      "ipv6 multicast", .multicast,
      FrameBuilder.udpPacket(
        from: endpoint(device6, 40010), to: endpoint(IPAddress("ff02::1")!, 9999), payload: [1])
    ),
    (
      "gre", .otherProtocol,
      FrameBuilder.ip(source: device, destination: world, proto: 47, payload: [0, 0, 8, 0])
    ),
    (
      "ipv6 routed mld to a global group is multicast", .multicast,
      FrameBuilder.ip(
        source: device6, destination: IPAddress("ff0e::1")!, proto: IPProtocolNumber.icmpv6,
        payload: FrameBuilder.icmp(type: 131), hopLimit: 1)
    ),
  ]

  /// A Tor connection as tor makes one: SYN (sequence 1), SYN-ACK, the ClientHello from
  /// sequence 2, the relay's first record.
  static let torFlow: [[UInt8]] = [
    FrameBuilder.tcpPacket(from: endpoint(device, 41000), to: guardEndpoint, flags: 0x02),
    FrameBuilder.tcpPacket(from: guardEndpoint, to: endpoint(device, 41000), flags: 0x12),
    FrameBuilder.tcpPacket(
      from: endpoint(device, 41000), to: guardEndpoint, sequence: 2,
      payload: FrameBuilder.tlsClientHello(serverName: "www.guard.example")),
    FrameBuilder.tcpPacket(
      from: guardEndpoint, to: endpoint(device, 41000), payload: [0x17, 3, 3, 0, 2, 9, 9]),
  ]

  static let linkControl: [(String, LinkControlKind, [UInt8], UInt16)] = [
    ("arp", .arp, FrameBuilder.arp(sender: device, target: IPAddress("10.66.0.1")!), 0x0806),
    (
      "arp probe", .arp,
      FrameBuilder.arp(sender: .zero, target: device) + [UInt8](repeating: 0, count: 18), 0x0806
    ),
    (
      "neighbour solicitation (duplicate address detection)", .neighbourDiscovery,
      FrameBuilder.ip(
        source: IPAddress("::")!, destination: IPAddress("ff02::1:ff00:2")!,
        proto: IPProtocolNumber.icmpv6,
        payload: FrameBuilder.neighbourSolicitation(target: device6, sourceMAC: nil),
        hopLimit: 255),
      0x86DD
    ),
    (
      "neighbour solicitation", .neighbourDiscovery,
      FrameBuilder.ip(
        source: IPAddress("fe80::2")!, destination: IPAddress("ff02::1:ff00:1")!,
        proto: IPProtocolNumber.icmpv6,
        payload: FrameBuilder.neighbourSolicitation(target: IPAddress("fd66::1")!),
        hopLimit: 255),
      0x86DD
    ),
    (
      "router solicitation", .neighbourDiscovery,
      FrameBuilder.ip(
        source: IPAddress("fe80::2")!, destination: IPAddress("ff02::2")!,
        proto: IPProtocolNumber.icmpv6, payload: FrameBuilder.icmp(type: 133), hopLimit: 255),
      0x86DD
    ),
    (
      "mldv2 report with hop-by-hop router alert", .mld,
      FrameBuilder.ipv6(
        source: IPAddress("fe80::2")!, destination: IPAddress("ff02::16")!,
        proto: IPProtocolNumber.icmpv6,
        payload: FrameBuilder.mldv2Report(groups: [IPAddress("ff02::1:ff00:2")!]),
        extensions: [.hopByHop], hopLimit: 1),
      0x86DD
    ),
    (
      "igmp report", .igmp,
      FrameBuilder.ip(
        source: device, destination: IPAddress("224.0.0.22")!, proto: IPProtocolNumber.igmp,
        payload: FrameBuilder.igmpv3Report(groups: [IPAddress("224.0.0.251")!]), hopLimit: 1),
      0x0800
    ),
  ]

  /// Whether the device sent `packet` (an IP packet): everything does but what is addressed
  /// to one of the device's addresses from elsewhere.
  static func sentByDevice(_ packet: [UInt8]) -> Bool {
    let decoded = packet.withUnsafeBytes { PacketDecoder(linkType: .raw).decode($0) }
    let own: Set<IPAddress> = [device, device6]
    return own.contains(decoded.source) || !own.contains(decoded.destination)
  }

  /// Audits IP packets wrapped for `linkType`, one millisecond apart, each framed as sent or
  /// received as ``sentByDevice(_:)`` says, unless `outbound` says otherwise.
  static func audit(
    _ packets: [[UInt8]], linkType: LinkType = .ethernet, policy: AuditPolicy = Fixtures.policy,
    etherType: UInt16? = nil, outbound: [Bool]? = nil
  ) -> AuditReport {
    let auditor = Auditor(linkType: linkType, policy: policy)
    for (index, packet) in packets.enumerated() {
      let sent = outbound?[index] ?? (etherType != nil || sentByDevice(packet))
      let frame = FrameBuilder.frame(linkType, ip: packet, etherType: etherType, outbound: sent)
      _ = frame.withUnsafeBytes {
        auditor.consume(
          timestamp: 1_700_000_000_000_000_000 + Int64(index) * 1_000_000,
          wireLength: $0.count, frame: $0)
      }
    }
    return auditor.report()
  }
}
