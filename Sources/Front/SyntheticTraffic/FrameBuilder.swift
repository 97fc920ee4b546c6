import Audit

/// Builds frames byte by byte: the tests' canaries and controls, and the benchmark's
/// generated captures. Checksums are left zero (the audit never reads them).
public enum FrameBuilder {
  /// An IPv6 extension header to put between the fixed header and the upper layer.
  public enum ExtensionHeader: Sendable {
    /// A hop-by-hop header as Linux writes MLD's: router alert (value 0) and 2 bytes of PadN.
    case hopByHop
    /// A hop-by-hop (0) or destination options (60) header with these option bytes, padded
    /// with zeros to a multiple of 8 (canaries: PadN with data, an unknown option).
    case options(header: UInt8, [UInt8])
    case routing
    case destinationOptions
    case authentication
    /// A fragment header: offset in bytes (a multiple of 8), more-fragments flag, id.
    case fragment(offset: Int, more: Bool, id: UInt32)

    var number: UInt8 {
      switch self {
      case .hopByHop: return 0
      case .options(let header, _): return header
      case .routing: return 43
      case .destinationOptions: return 60
      case .authentication: return 51
      case .fragment: return 44
      }
    }

    func bytes(next: UInt8) -> [UInt8] {
      switch self {
      case .hopByHop:
        return [next, 0, 5, 2, 0, 0, 1, 0]
      case .options(_, let options):
        let padded = options + [UInt8](repeating: 0, count: (8 - (options.count + 2) % 8) % 8)
        return [next, UInt8((padded.count + 2) / 8 - 1)] + padded
      case .destinationOptions:
        // PadN over the 6 option bytes.
        return [next, 0, 1, 4, 0, 0, 0, 0]
      case .routing:
        return [next, 0, 0, 0, 0, 0, 0, 0]
      case .authentication:
        return [next, 2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0]
      case .fragment(let offset, let more, let id):
        let field = UInt16(offset / 8) << 3 | (more ? 1 : 0)
        return [next, 0] + be16(field) + be32(id)
      }
    }
  }

  public static func be16(_ value: UInt16) -> [UInt8] {
    [UInt8(value >> 8), UInt8(truncatingIfNeeded: value)]
  }

  public static func be32(_ value: UInt32) -> [UInt8] {
    [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: value >> $0) }
  }

  // MARK: link layers

  /// The device's MAC in built frames, and its peer's (the censor's side of the link).
  public static let deviceMAC: [UInt8] = [0x02, 0, 0, 0, 0, 0x01]
  public static let peerMAC: [UInt8] = [0x02, 0, 0, 0, 0, 0x02]
  /// `deviceMAC` as the audit holds MACs (low 48 bits).
  public static let deviceMACValue: UInt64 = 0x0200_0000_0001

  /// An Ethernet frame the device sent (`outbound`) or received.
  public static func ethernet(etherType: UInt16, payload: [UInt8], outbound: Bool = true)
    -> [UInt8]
  {
    (outbound ? peerMAC + deviceMAC : deviceMAC + peerMAC) + be16(etherType) + payload
  }

  public static func linuxSLL(etherType: UInt16, payload: [UInt8], outbound: Bool = true)
    -> [UInt8]
  {
    // Packet type (4 outgoing, 0 to us), ARPHRD_ETHER, address length 6, sender, protocol.
    [0, outbound ? 4 : 0, 0, 1, 0, 6] + (outbound ? deviceMAC : peerMAC) + [0, 0]
      + be16(etherType) + payload
  }

  public static func linuxSLL2(etherType: UInt16, payload: [UInt8], outbound: Bool = true)
    -> [UInt8]
  {
    // Protocol, reserved, interface index, ARPHRD_ETHER, packet type, address length, address.
    be16(etherType) + [0, 0] + be32(2) + [0, 1, outbound ? 4 : 0, 6]
      + (outbound ? deviceMAC : peerMAC) + [0, 0] + payload
  }

  /// Wraps an IP packet (or, with `etherType`, another link payload) for `linkType`, as sent
  /// by the device (`outbound`) or received by it.
  public static func frame(
    _ linkType: LinkType, ip packet: [UInt8], etherType: UInt16? = nil, outbound: Bool = true
  ) -> [UInt8] {
    let type = etherType ?? (packet.first.map { $0 >> 4 == 6 ? 0x86DD : 0x0800 } ?? 0x0800)
    switch linkType {
    case .ethernet: return ethernet(etherType: type, payload: packet, outbound: outbound)
    case .linuxSLL: return linuxSLL(etherType: type, payload: packet, outbound: outbound)
    case .linuxSLL2: return linuxSLL2(etherType: type, payload: packet, outbound: outbound)
    case .raw, .rawDLT, .rawOpenBSD, .ipv4, .ipv6: return packet
    case .null: return [type == 0x86DD ? 10 : 2, 0, 0, 0] + packet
    case .loop: return [0, 0, 0, type == 0x86DD ? 10 : 2] + packet
    }
  }

  // MARK: network layer

  public static func ipv4(
    source: IPAddress, destination: IPAddress, proto: UInt8, payload: [UInt8], id: UInt16 = 1,
    fragmentOffset: Int = 0, moreFragments: Bool = false, ttl: UInt8 = 64
  ) -> [UInt8] {
    let flags = UInt16(fragmentOffset / 8) | (moreFragments ? 0x2000 : 0)
    var header: [UInt8] = [0x45, 0] + be16(UInt16(20 + payload.count)) + be16(id) + be16(flags)
    header += [ttl, proto, 0, 0]
    header += source.bytes + destination.bytes
    return header + payload
  }

  public static func ipv6(
    source: IPAddress, destination: IPAddress, proto: UInt8, payload: [UInt8],
    extensions: [ExtensionHeader] = [], hopLimit: UInt8 = 64
  ) -> [UInt8] {
    var chain: [UInt8] = []
    var next = proto
    for header in extensions.reversed() {
      chain = header.bytes(next: next) + chain
      next = header.number
    }
    let body = chain + payload
    return [0x60, 0, 0, 0] + be16(UInt16(body.count)) + [next, hopLimit] + source.bytes
      + destination.bytes + body
  }

  /// An IP packet of the right family for the two addresses.
  public static func ip(
    source: IPAddress, destination: IPAddress, proto: UInt8, payload: [UInt8],
    hopLimit: UInt8 = 64
  ) -> [UInt8] {
    source.isIPv6
      ? ipv6(
        source: source, destination: destination, proto: proto, payload: payload,
        hopLimit: hopLimit)
      : ipv4(
        source: source, destination: destination, proto: proto, payload: payload, ttl: hopLimit)
  }

  // MARK: transport

  public static func udp(sourcePort: UInt16, destinationPort: UInt16, payload: [UInt8]) -> [UInt8] {
    be16(sourcePort) + be16(destinationPort) + be16(UInt16(8 + payload.count)) + [0, 0] + payload
  }

  /// TCP flags: 0x02 SYN, 0x10 ACK, 0x18 PSH+ACK.
  public static func tcp(
    sourcePort: UInt16, destinationPort: UInt16, flags: UInt8 = 0x18, sequence: UInt32 = 1,
    payload: [UInt8] = []
  ) -> [UInt8] {
    be16(sourcePort) + be16(destinationPort) + be32(sequence) + be32(0) + [0x50, flags]
      + be16(65535) + [0, 0, 0, 0] + payload
  }

  public static func icmp(type: UInt8, code: UInt8 = 0, rest: [UInt8] = [0, 1, 0, 1])
    -> [UInt8]
  {
    [type, code, 0, 0] + rest
  }

  public static func udpPacket(from source: Endpoint, to destination: Endpoint, payload: [UInt8])
    -> [UInt8]
  {
    ip(
      source: source.address, destination: destination.address, proto: IPProtocolNumber.udp,
      payload: udp(sourcePort: source.port, destinationPort: destination.port, payload: payload))
  }

  public static func tcpPacket(
    from source: Endpoint, to destination: Endpoint, flags: UInt8 = 0x18, sequence: UInt32 = 1,
    payload: [UInt8] = []
  ) -> [UInt8] {
    ip(
      source: source.address, destination: destination.address, proto: IPProtocolNumber.tcp,
      payload: tcp(
        sourcePort: source.port, destinationPort: destination.port, flags: flags,
        sequence: sequence, payload: payload))
  }

  // MARK: link control and errors

  /// An ARP request (op 1) or reply (2) over Ethernet, 28 bytes.
  public static func arp(
    op: UInt16 = 1, senderMAC: [UInt8] = deviceMAC, sender: IPAddress, target: IPAddress
  ) -> [UInt8] {
    be16(1) + be16(0x0800) + [6, 4] + be16(op) + senderMAC + sender.bytes
      + [UInt8](repeating: 0, count: 6) + target.bytes
  }

  /// A neighbour solicitation for `target` (24 bytes), with a source link-layer address
  /// option unless the sender is unspecified (duplicate address detection).
  public static func neighbourSolicitation(target: IPAddress, sourceMAC: [UInt8]? = deviceMAC)
    -> [UInt8]
  {
    [135, 0, 0, 0, 0, 0, 0, 0] + target.bytes + (sourceMAC.map { [1, 1] + $0 } ?? [])
  }

  /// An MLDv2 report (type 143) with one record per group: mode change, no sources.
  public static func mldv2Report(groups: [IPAddress]) -> [UInt8] {
    [143, 0, 0, 0, 0, 0] + be16(UInt16(groups.count))
      + groups.flatMap { [4, 0, 0, 0] + $0.bytes }
  }

  /// An IGMPv3 report (type 0x22) with one record per group, no sources.
  public static func igmpv3Report(groups: [IPAddress]) -> [UInt8] {
    [0x22, 0, 0, 0, 0, 0] + be16(UInt16(groups.count)) + groups.flatMap { [4, 0, 0, 0] + $0.bytes }
  }

  /// An ICMP (or ICMPv6) error from `source` to `destination` quoting `quoted` (an IP packet),
  /// plus `extra` bytes after the quote.
  public static func icmpError(
    from source: IPAddress, to destination: IPAddress, quoting quoted: [UInt8],
    extra: [UInt8] = []
  ) -> [UInt8] {
    let body = quoted + extra
    if source.isIPv6 {
      return ipv6(
        source: source, destination: destination, proto: IPProtocolNumber.icmpv6,
        payload: [1, 4, 0, 0, 0, 0, 0, 0] + body)
    }
    return ipv4(
      source: source, destination: destination, proto: IPProtocolNumber.icmp,
      payload: [3, 3, 0, 0, 0, 0, 0, 0] + body)
  }

  /// An IPv4 packet with `options` (padded to a multiple of 4) in its header.
  public static func ipv4(
    source: IPAddress, destination: IPAddress, proto: UInt8, payload: [UInt8], ttl: UInt8 = 64,
    options: [UInt8]
  ) -> [UInt8] {
    let padded = options + [UInt8](repeating: 0, count: (4 - options.count % 4) % 4)
    let headerLength = 20 + padded.count
    var header: [UInt8] =
      [0x40 | UInt8(headerLength / 4), 0] + be16(UInt16(headerLength + payload.count))
      + be16(1) + be16(0)
    header += [ttl, proto, 0, 0]
    header += source.bytes + destination.bytes
    return header + padded + payload
  }

  // MARK: application payloads

  /// A DNS query (RD set) for `name`, type A unless given.
  public static func dnsQuery(id: UInt16 = 0x1234, name: String, type: UInt16 = 1) -> [UInt8] {
    var message = be16(id) + [0x01, 0x00] + be16(1) + be16(0) + be16(0) + be16(0)
    for label in name.split(separator: ".") {
      let bytes = Array(label.utf8)
      message.append(UInt8(bytes.count))
      message += bytes
    }
    message.append(0)
    return message + be16(type) + be16(1)
  }

  /// A TLS 1.2-style ClientHello record carrying `serverName` in its SNI extension.
  public static func tlsClientHello(serverName: String) -> [UInt8] {
    let name = Array(serverName.utf8)
    let serverNameList = [0] + be16(UInt16(name.count)) + name
    let sniExtension =
      be16(0) + be16(UInt16(serverNameList.count + 2))
      + be16(UInt16(serverNameList.count)) + serverNameList
    let otherExtension = be16(0x000B) + be16(2) + [1, 0]
    let extensions = otherExtension + sniExtension
    var body: [UInt8] = [0x03, 0x03] + [UInt8](repeating: 0xAB, count: 32)
    body += [0]  // no session id
    body += be16(4) + [0x13, 0x01, 0xC0, 0x2F]
    body += [1, 0]  // null compression
    body += be16(UInt16(extensions.count)) + extensions
    let handshake = [0x01, 0] + be16(UInt16(body.count)) + body
    return [0x16, 0x03, 0x01] + be16(UInt16(handshake.count)) + handshake
  }

  public static func httpRequest(host: String, path: String = "/") -> [UInt8] {
    Array("GET \(path) HTTP/1.1\r\nUser-Agent: canary\r\nHost: \(host)\r\nAccept: */*\r\n\r\n".utf8)
  }
}
