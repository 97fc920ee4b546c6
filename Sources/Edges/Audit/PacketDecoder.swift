/// Decodes link, network and transport headers of one captured frame. Pure and allocation-free:
/// it reads an `UnsafeRawBufferPointer` and fills a ``DecodedPacket``. Every read is bounds
/// checked, so a frame cut at any length decodes as far as its bytes allow and never traps.
public struct PacketDecoder: Sendable {
  public let linkType: LinkType
  /// The device's own MACs (low 48 bits): an Ethernet frame from one of them is outbound,
  /// any other inbound. Empty: Ethernet frames carry no direction.
  public let deviceLinkAddresses: [UInt64]
  /// The capture sits on the far end of the device's link (the censor's interface that peers
  /// with the device), so the kernel's packet type is reversed: a frame that end received is
  /// one the device sent, and one it sent is arriving at the device. Cooked (SLL, SLL2) only:
  /// an Ethernet frame's source MAC says who sent it from either end.
  public let farEndOfLink: Bool

  public init(linkType: LinkType, deviceLinkAddresses: [UInt64] = [], farEndOfLink: Bool = false) {
    self.linkType = linkType
    self.deviceLinkAddresses = deviceLinkAddresses
    self.farEndOfLink = farEndOfLink
  }

  @inline(__always)
  private func cookedDirection(_ packetType: UInt16) -> PacketDirection {
    let direction = PacketDirection.linux(packetType: packetType)
    return farEndOfLink ? direction.reversed : direction
  }

  @inline(__always)
  private static func mac(_ frame: UnsafeRawBufferPointer, _ offset: Int) -> UInt64 {
    UInt64(frame.u16(offset)) << 32 | UInt64(frame.u32(offset + 2))
  }

  public func decode(_ frame: UnsafeRawBufferPointer) -> DecodedPacket {
    var packet = DecodedPacket()
    decode(frame, into: &packet)
    return packet
  }

  /// Decodes into `packet`, which must be fresh (`DecodedPacket()`): the auditor's hot path
  /// decodes into its own storage, where returning the packet cost two copies of it per frame
  /// (perf: a tenth of the audit's time in memmove).
  @inline(__always)
  public func decode(_ frame: UnsafeRawBufferPointer, into packet: inout DecodedPacket) {
    let count = frame.count
    switch linkType {
    case .ethernet:
      guard count >= 14 else { return }
      packet.linkSource = Self.mac(frame, 6)
      packet.hasLinkSource = true
      if !deviceLinkAddresses.isEmpty {
        packet.direction = deviceLinkAddresses.contains(packet.linkSource) ? .outbound : .inbound
      }
      var offset = 12
      var type = frame.u16(offset)
      // 802.1Q and 802.1ad tags, at most two.
      var tags = 0
      while (type == 0x8100 || type == 0x88A8) && tags < 2 {
        offset += 4
        tags += 1
        guard count >= offset + 2 else { return }
        type = frame.u16(offset)
      }
      decodeEtherType(type, frame, offset + 2, &packet)
    case .linuxSLL:
      guard count >= 16 else { return }
      packet.direction = cookedDirection(frame.u16(0))
      if frame.u16(4) == 6 {
        packet.linkSource = Self.mac(frame, 6)
        packet.hasLinkSource = true
      }
      decodeEtherType(frame.u16(14), frame, 16, &packet)
    case .linuxSLL2:
      guard count >= 20 else { return }
      packet.direction = cookedDirection(UInt16(frame.u8(10)))
      if frame.u8(11) == 6 {
        packet.linkSource = Self.mac(frame, 12)
        packet.hasLinkSource = true
      }
      decodeEtherType(frame.u16(0), frame, 20, &packet)
    case .raw, .rawDLT, .rawOpenBSD:
      guard count >= 1 else { return }
      switch frame.u8(0) >> 4 {
      case 4: decodeIPv4(frame, 0, &packet)
      case 6: decodeIPv6(frame, 0, &packet)
      default: return
      }
    case .ipv4:
      decodeIPv4(frame, 0, &packet)
    case .ipv6:
      decodeIPv6(frame, 0, &packet)
    case .null, .loop:
      guard count >= 4 else { return }
      // The address family is in host order for NULL, network order for LOOP.
      let raw = frame.loadUnaligned(as: UInt32.self)
      let family = linkType == .loop ? UInt32(bigEndian: raw) : raw
      switch family {
      case 2: decodeIPv4(frame, 4, &packet)
      case 10, 24, 28, 30: decodeIPv6(frame, 4, &packet)
      default:
        packet.network = .otherLink
        packet.etherType = UInt16(truncatingIfNeeded: family)
      }
    }
  }

  @inline(__always)
  private func decodeEtherType(
    _ type: UInt16, _ frame: UnsafeRawBufferPointer, _ offset: Int, _ packet: inout DecodedPacket
  ) {
    packet.etherType = type
    switch type {
    case 0x0800: decodeIPv4(frame, offset, &packet)
    case 0x86DD: decodeIPv6(frame, offset, &packet)
    case 0x0806, 0x8035:
      packet.network = .arp
      packet.networkOffset = offset
      packet.networkEnd = frame.count
    default: packet.network = .otherLink
    }
  }

  @inline(__always)
  private func decodeIPv4(
    _ frame: UnsafeRawBufferPointer, _ start: Int, _ packet: inout DecodedPacket
  ) {
    guard frame.count >= start + 20, frame.u8(start) >> 4 == 4 else { return }
    let headerLength = Int(frame.u8(start) & 0x0F) * 4
    guard headerLength >= 20, frame.count >= start + headerLength else { return }
    packet.network = .ipv4
    packet.etherType = 0x0800
    packet.networkOffset = start
    let totalLength = Int(frame.u16(start + 2))
    packet.ipTotalLength = totalLength
    if headerLength > 20 {
      Self.ipv4Options(frame, start + 20, start + headerLength, &packet)
    }
    if frame.count > start + totalLength && totalLength >= headerLength {
      Self.checkPadding(frame, from: start + totalLength, &packet)
    }
    let fragmentField = frame.u16(start + 6)
    packet.hopLimit = frame.u8(start + 8)
    packet.ipProtocol = frame.u8(start + 9)
    packet.source = IPAddress(ipv4: frame.u32(start + 12))
    packet.destination = IPAddress(ipv4: frame.u32(start + 16))
    let fragmentOffset = fragmentField & 0x1FFF
    if fragmentOffset != 0 || fragmentField & 0x2000 != 0 {
      packet.isFragment = true
      packet.fragmentID = UInt32(frame.u16(start + 4))
      packet.isLaterFragment = fragmentOffset != 0
      packet.fragmentOffset = Int(fragmentOffset) * 8
    }
    // The IP total length bounds the payload (Ethernet pads short frames); the capture may
    // cut it shorter still.
    let end = min(frame.count, start + max(totalLength, headerLength))
    let payloadStart = start + headerLength
    packet.networkEnd = end
    packet.transportOffset = payloadStart
    if packet.isLaterFragment {
      packet.payloadOffset = payloadStart
      packet.payloadLength = end - payloadStart
      return
    }
    decodeTransport(frame, payloadStart, end, isIPv6: false, &packet)
  }

  @inline(__always)
  private func decodeIPv6(
    _ frame: UnsafeRawBufferPointer, _ start: Int, _ packet: inout DecodedPacket
  ) {
    guard frame.count >= start + 40, frame.u8(start) >> 4 == 6 else { return }
    packet.network = .ipv6
    packet.etherType = 0x86DD
    packet.networkOffset = start
    let payloadLength = Int(frame.u16(start + 4))
    packet.ipTotalLength = 40 + payloadLength
    var next = frame.u8(start + 6)
    packet.hopLimit = frame.u8(start + 7)
    packet.source = IPAddress(high: frame.u64(start + 8), low: frame.u64(start + 16), isIPv6: true)
    packet.destination = IPAddress(
      high: frame.u64(start + 24), low: frame.u64(start + 32), isIPv6: true)
    // A zero payload length means a jumbogram; then the captured bytes are the bound.
    let end = payloadLength == 0 ? frame.count : min(frame.count, start + 40 + payloadLength)
    if payloadLength != 0 && frame.count > start + 40 + payloadLength {
      Self.checkPadding(frame, from: start + 40 + payloadLength, &packet)
    }
    packet.networkEnd = end
    var offset = start + 40
    var headers = 0
    // Walk extension headers to the upper layer (bounded: a loop of headers cannot spin).
    while headers < 16 {
      headers += 1
      switch next {
      // Hop-by-hop, routing, destination options, mobility, HIP, shim6: length in 8-byte units.
      case 0, 43, 60, 135, 139, 140:
        switch next {
        case 0: packet.networkExtras.insert(.hopByHop)
        case 43:
          packet.networkExtras.insert(.routing)
          packet.anomalies.insert(.routingHeader)
        case 60: packet.networkExtras.insert(.destinationOptions)
        default: packet.networkExtras.insert(.otherExtensionHeader)
        }
        guard end >= offset + 8 else {
          packet.ipProtocol = next
          packet.transportTruncated = true
          return
        }
        let length = (Int(frame.u8(offset + 1)) + 1) * 8
        if next == 0 || next == 60 {
          Self.ipv6Options(
            frame, offset + 2, min(end, offset + length), hopByHop: next == 0, &packet)
        }
        next = frame.u8(offset)
        offset += length
      case 51:  // authentication header: length in 4-byte units, minus 2
        packet.networkExtras.insert(.otherExtensionHeader)
        guard end >= offset + 8 else {
          packet.ipProtocol = next
          packet.transportTruncated = true
          return
        }
        let length = (Int(frame.u8(offset + 1)) + 2) * 4
        next = frame.u8(offset)
        offset += length
      case 44:  // fragment
        packet.networkExtras.insert(.fragmentHeader)
        guard end >= offset + 8 else {
          packet.ipProtocol = next
          packet.transportTruncated = true
          return
        }
        let field = frame.u16(offset + 2)
        packet.isFragment = true
        packet.fragmentID = frame.u32(offset + 4)
        packet.isLaterFragment = field >> 3 != 0
        packet.fragmentOffset = Int(field >> 3) * 8
        next = frame.u8(offset)
        offset += 8
        if packet.isLaterFragment {
          packet.transportOffset = min(offset, end)
          packet.ipProtocol = next
          packet.payloadOffset = min(offset, end)
          packet.payloadLength = max(0, end - offset)
          return
        }
      default:
        decodeTransport(frame, offset, end, isIPv6: true, next: next, &packet)
        return
      }
    }
    packet.ipProtocol = next
    packet.transportTruncated = true
  }

  @inline(__always)
  private func decodeTransport(
    _ frame: UnsafeRawBufferPointer, _ start: Int, _ end: Int, isIPv6: Bool, next: UInt8? = nil,
    _ packet: inout DecodedPacket
  ) {
    if let next { packet.ipProtocol = next }
    packet.transportOffset = min(start, end)
    packet.payloadOffset = min(start, end)
    switch packet.ipProtocol {
    case IPProtocolNumber.tcp:
      guard end >= start + 20 else {
        packet.transportTruncated = true
        return
      }
      packet.sourcePort = frame.u16(start)
      packet.destinationPort = frame.u16(start + 2)
      packet.hasPorts = true
      packet.tcpFlags = frame.u8(start + 13)
      packet.tcpSequence = frame.u32(start + 4)
      let dataOffset = Int(frame.u8(start + 12) >> 4) * 4
      if dataOffset > 20 && end >= start + dataOffset {
        Self.tcpOptions(frame, start + 20, start + dataOffset, &packet)
      }
      packet.payloadOffset = min(start + max(dataOffset, 20), end)
      packet.payloadLength = end - packet.payloadOffset
    case IPProtocolNumber.udp:
      guard end >= start + 8 else {
        packet.transportTruncated = true
        return
      }
      packet.sourcePort = frame.u16(start)
      packet.destinationPort = frame.u16(start + 2)
      packet.hasPorts = true
      packet.payloadOffset = start + 8
      let udpLength = Int(frame.u16(start + 4))
      let udpEnd = udpLength >= 8 ? min(end, start + udpLength) : end
      packet.payloadLength = udpEnd - packet.payloadOffset
      // Bytes inside the IP packet after the UDP datagram: no stack sends them.
      if udpEnd < end { packet.anomalies.insert(.trailingData) }
    case IPProtocolNumber.icmp, IPProtocolNumber.icmpv6:
      guard end >= start + 4 else {
        packet.transportTruncated = true
        return
      }
      packet.icmpType = frame.u8(start)
      packet.icmpCode = frame.u8(start + 1)
      packet.payloadOffset = min(start + 8, end)
      packet.payloadLength = end - packet.payloadOffset
      if Self.isICMPError(packet.ipProtocol, packet.icmpType) && end > start + 8 {
        decodeQuoted(frame, start + 8, end, &packet)
      }
    default:
      packet.payloadLength = end - packet.payloadOffset
    }
  }

  /// ICMP destination unreachable, source quench, redirect, time exceeded, parameter problem;
  /// ICMPv6 types below 128.
  @inline(__always)
  static func isICMPError(_ ipProtocol: UInt8, _ type: UInt8) -> Bool {
    if ipProtocol == IPProtocolNumber.icmpv6 { return type < 128 }
    switch type {
    case 3, 4, 5, 11, 12: return true
    default: return false
    }
  }

  /// IPv4 and TCP options share one layout: end (0), after which only zeros may follow;
  /// no-op (1); then kind, length (counting both), data. Calls `option` with each other
  /// option's kind, offset and length; false when the layout breaks (an option running past
  /// the end, a length under 2, bytes other than zero after the end mark).
  @inline(__always)
  static func walkKindLengthOptions(
    _ frame: UnsafeRawBufferPointer, _ start: Int, _ end: Int,
    _ option: (_ kind: UInt8, _ offset: Int, _ length: Int) -> Void
  ) -> Bool {
    var offset = start
    while offset < end {
      let kind = frame.u8(offset)
      if kind == 0 {
        for index in (offset + 1)..<end where frame.u8(index) != 0 { return false }
        return true
      }
      if kind == 1 {
        offset += 1
        continue
      }
      guard offset + 1 < end else { return false }
      let length = Int(frame.u8(offset + 1))
      guard length >= 2, offset + length <= end else { return false }
      option(kind, offset, length)
      offset += length
    }
    return true
  }

  /// What IPv4 options carry: router alert (148, which IGMP and RSVP use) is ordinary only as
  /// RFC 2113 writes it (4 bytes, value 0); source routing, record route and timestamps are
  /// not.
  static func ipv4Options(
    _ frame: UnsafeRawBufferPointer, _ start: Int, _ end: Int, _ packet: inout DecodedPacket
  ) {
    var anomalies = PacketAnomalies()
    var extras = NetworkExtras()
    let intact = walkKindLengthOptions(frame, start, end) { kind, offset, length in
      switch kind {
      case 131, 137:
        anomalies.insert(.sourceRoute)
        extras.insert(.otherIPv4Option)
      case 7, 68:
        anomalies.insert(.recordRoute)
        extras.insert(.otherIPv4Option)
      case 148 where length == 4 && frame.u16(offset + 2) == 0:
        extras.insert(.routerAlert)
      default:
        anomalies.insert(.otherIPOption)
        extras.insert(.otherIPv4Option)
      }
    }
    if !intact { anomalies.insert(.malformedIPOptions) }
    packet.anomalies.formUnion(anomalies)
    packet.networkExtras.formUnion(extras)
  }

  /// IPv6 hop-by-hop or destination options (``IPv6OptionsWalk``): a problem is an anomaly,
  /// MLD's router alert an extra.
  static func ipv6Options(
    _ frame: UnsafeRawBufferPointer, _ start: Int, _ end: Int, hopByHop: Bool,
    _ packet: inout DecodedPacket
  ) {
    let walk = IPv6OptionsWalk(frame, start, end, hopByHop: hopByHop)
    if walk.problem != nil { packet.anomalies.insert(.extensionOptionData) }
    if walk.routerAlert { packet.networkExtras.insert(.routerAlert) }
  }

  /// TCP options (RFC 9293 3.2 and the registry's kinds in use): MSS (4 bytes), window
  /// scale (3), SACK permitted (2), SACK (2 + 8n, n 1-4), timestamps (10), MD5 (18), MPTCP
  /// (30, at least 3), TCP-AO (29, at least 4), Fast Open (34, a cookie of 4-16 bytes or
  /// none), AccECN (172, 174: 2 + 3n bytes). Anything else can carry data past the stream's
  /// own bytes.
  static func tcpOptions(
    _ frame: UnsafeRawBufferPointer, _ start: Int, _ end: Int, _ packet: inout DecodedPacket
  ) {
    var fitsAll = true
    let intact = walkKindLengthOptions(frame, start, end) { kind, _, length in
      let fits: Bool
      switch kind {
      case 2: fits = length == 4
      case 3: fits = length == 3
      case 4: fits = length == 2
      case 5: fits = length >= 10 && length <= 34 && (length - 2) % 8 == 0
      case 8: fits = length == 10
      case 19: fits = length == 18
      case 29: fits = length >= 4
      case 30: fits = length >= 3
      case 34: fits = length == 2 || (length >= 6 && length <= 18 && length % 2 == 0)
      case 172, 174: fits = length <= 11 && (length - 2) % 3 == 0  // AccECN
      default: fits = false
      }
      if !fits { fitsAll = false }
    }
    if !intact || !fitsAll { packet.anomalies.insert(.tcpOptionData) }
  }

  /// Bytes in the frame after the IP datagram: an Ethernet frame's padding is zeros; any
  /// other byte there is carried on the wire past the packet's own length.
  @inline(__always)
  static func checkPadding(
    _ frame: UnsafeRawBufferPointer, from start: Int, _ packet: inout DecodedPacket
  ) {
    for index in start..<frame.count where frame.u8(index) != 0 {
      packet.anomalies.insert(.trailingData)
      return
    }
  }

  /// Reads the header an ICMP error quotes: its protocol, addresses and (when present) ports.
  private func decodeQuoted(
    _ frame: UnsafeRawBufferPointer, _ start: Int, _ end: Int, _ packet: inout DecodedPacket
  ) {
    var inner = DecodedPacket()
    let bounded = UnsafeRawBufferPointer(rebasing: frame[start..<end])
    guard let first = bounded.first else { return }
    switch first >> 4 {
    case 4: decodeIPv4(bounded, 0, &inner)
    case 6: decodeIPv6(bounded, 0, &inner)
    default: return
    }
    guard inner.network == .ipv4 || inner.network == .ipv6 else { return }
    // A quoted header may be cut after 8 transport bytes: the ports are in the first 4.
    if !inner.hasPorts, inner.ipProtocol == IPProtocolNumber.tcp || inner.ipProtocol == 17 {
      let transport = inner.payloadOffset
      if bounded.count >= transport + 4 {
        inner.sourcePort = bounded.u16(transport)
        inner.destinationPort = bounded.u16(transport + 2)
      }
    }
    packet.hasQuotedPacket = true
    packet.quotedBytes = end - start
    packet.quotedClaimedLength = inner.ipTotalLength
    packet.quotedProtocol = inner.ipProtocol
    packet.quotedSource = inner.sourceEndpoint
    packet.quotedDestination = inner.destinationEndpoint
  }
}
