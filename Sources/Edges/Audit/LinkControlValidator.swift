/// Decides whether a frame that looks like link control (ARP, IPv6 neighbour discovery, MLD,
/// IGMP) is what a kernel sends for the link itself, before the policy lets it pass: well
/// formed to the byte (no room to carry anything beyond the protocol), hop limit or TTL as
/// the protocol requires, and naming only the link's own addresses and link-scoped groups.
/// Anything else that claims to be link control is a leak with the reason.
struct LinkControlValidator {
  /// The device's link prefixes; empty: addresses are not checked against the link.
  let linkNetworks: [IPNetwork]

  enum Result: Equatable {
    case valid(LinkControlKind)
    case invalid(LinkControlKind, LeakReason)
  }

  /// Nil when the packet carries nothing its protocol does not need: no data in IPv6
  /// options, nothing after the message, no other anomaly, and network extras only among
  /// `needed` (MLD: a hop-by-hop router alert; IGMP: an IPv4 router alert; else none).
  private func extrasProblem(_ packet: DecodedPacket, needed: NetworkExtras) -> LeakReason? {
    if packet.anomalies.contains(.extensionOptionData) { return .extensionOptions }
    if packet.anomalies.contains(.trailingData) { return .trailingData }
    if !packet.anomalies.isEmpty { return .malformedLinkControl }
    if !packet.networkExtras.subtracting(needed).isEmpty { return .headerNotNeeded }
    return nil
  }

  private func onLink(_ address: IPAddress) -> Bool {
    if address.isIPv6 && IPNetwork.ipv6LinkLocal.contains(address) { return true }
    return linkNetworks.isEmpty || linkNetworks.contains { $0.contains(address) }
  }

  /// ARP over Ethernet: 28 bytes, request or reply, the sender's MAC the frame's own, both
  /// addresses on the link (a sender of 0.0.0.0 is an address probe); padding only zeros.
  func arp(_ packet: DecodedPacket, _ frame: UnsafeRawBufferPointer) -> Result {
    let start = packet.networkOffset
    guard packet.etherType == 0x0806, frame.count >= start + 28,
      frame.u16(start) == 1, frame.u16(start + 2) == 0x0800, frame.u8(start + 4) == 6,
      frame.u8(start + 5) == 4, frame.u16(start + 6) == 1 || frame.u16(start + 6) == 2
    else { return .invalid(.arp, .malformedLinkControl) }
    for offset in (start + 28)..<frame.count where frame.u8(offset) != 0 {
      return .invalid(.arp, .malformedLinkControl)
    }
    let senderMAC = UInt64(frame.u16(start + 8)) << 32 | UInt64(frame.u32(start + 10))
    if packet.hasLinkSource && senderMAC != packet.linkSource {
      return .invalid(.arp, .malformedLinkControl)
    }
    let sender = IPAddress(ipv4: frame.u32(start + 14))
    let target = IPAddress(ipv4: frame.u32(start + 24))
    guard sender == .zero || onLink(sender), onLink(target) else {
      return .invalid(.arp, .linkControlOffLink)
    }
    return .valid(.arp)
  }

  /// ICMPv6 neighbour discovery, MLD, or IGMP; nil when the packet is none of them.
  func ipControl(_ packet: DecodedPacket, _ frame: UnsafeRawBufferPointer) -> Result? {
    if packet.network == .ipv6 && packet.ipProtocol == IPProtocolNumber.icmpv6 {
      switch packet.icmpType {
      case 133, 134, 135, 136, 137: return neighbourDiscovery(packet, frame)
      case 130, 131, 132, 143: return mld(packet, frame)
      default: return nil
      }
    }
    if packet.network == .ipv4 && packet.ipProtocol == IPProtocolNumber.igmp {
      return igmp(packet, frame)
    }
    return nil
  }

  /// Options after the fixed part: type-length-value in 8-byte units, tiling the rest exactly,
  /// of the types the message may carry; link-layer address options the size of a MAC.
  private func options(
    _ frame: UnsafeRawBufferPointer, _ start: Int, _ end: Int, allowed: Set<UInt8>,
    linkSource: UInt64?
  ) -> Bool {
    var offset = start
    while offset < end {
      guard offset + 2 <= end else { return false }
      let type = frame.u8(offset)
      let length = Int(frame.u8(offset + 1)) * 8
      guard length > 0, offset + length <= end, allowed.contains(type) else { return false }
      if type == 1 || type == 2 {
        guard length == 8 else { return false }
        if type == 1, let linkSource {
          let mac = UInt64(frame.u16(offset + 2)) << 32 | UInt64(frame.u32(offset + 4))
          guard mac == linkSource else { return false }
        }
      }
      offset += length
    }
    return true
  }

  private func neighbourDiscovery(_ packet: DecodedPacket, _ frame: UnsafeRawBufferPointer)
    -> Result
  {
    let start = packet.transportOffset
    let end = packet.networkEnd
    let length = end - start
    let linkSource = packet.hasLinkSource ? packet.linkSource : nil
    if let problem = extrasProblem(packet, needed: []) {
      return .invalid(.neighbourDiscovery, problem)
    }
    guard packet.hopLimit == 255, packet.icmpCode == 0, !packet.transportTruncated
    else { return .invalid(.neighbourDiscovery, .malformedLinkControl) }
    guard packet.source == .zeroIPv6 || onLink(packet.source),
      packet.destination.isLinkLocalMulticast || onLink(packet.destination)
    else { return .invalid(.neighbourDiscovery, .linkControlOffLink) }
    let fixed: Int
    let allowed: Set<UInt8>
    switch packet.icmpType {
    case 133: (fixed, allowed) = (8, [1])
    case 134: (fixed, allowed) = (16, [1, 3, 5, 24, 25, 31])
    case 135: (fixed, allowed) = (24, [1, 14])
    case 136: (fixed, allowed) = (24, [2])
    default: (fixed, allowed) = (40, [2, 4])
    }
    guard length >= fixed,
      options(frame, start + fixed, end, allowed: allowed, linkSource: linkSource)
    else { return .invalid(.neighbourDiscovery, .malformedLinkControl) }
    if packet.icmpType == 135 || packet.icmpType == 136 {
      let target = IPAddress(high: frame.u64(start + 8), low: frame.u64(start + 16), isIPv6: true)
      guard !target.isMulticastOrBroadcast, onLink(target) else {
        return .invalid(.neighbourDiscovery, .linkControlOffLink)
      }
    }
    return .valid(.neighbourDiscovery)
  }

  /// Multicast listener messages: hop limit 1, to a link-scoped group, from a link-local or
  /// unspecified source; every group they name link-scoped, with no source lists or
  /// auxiliary data.
  private func mld(_ packet: DecodedPacket, _ frame: UnsafeRawBufferPointer) -> Result {
    let start = packet.transportOffset
    let end = packet.networkEnd
    let length = end - start
    if let problem = extrasProblem(packet, needed: [.hopByHop, .routerAlert]) {
      return .invalid(.mld, problem)
    }
    guard packet.hopLimit == 1, packet.icmpCode == 0, !packet.transportTruncated
    else { return .invalid(.mld, .malformedLinkControl) }
    guard packet.destination.isLinkLocalMulticast,
      packet.source == .zeroIPv6 || IPNetwork.ipv6LinkLocal.contains(packet.source)
    else { return .invalid(.mld, .linkControlOffLink) }
    func linkScoped(_ offset: Int) -> Bool {
      let group = IPAddress(high: frame.u64(offset), low: frame.u64(offset + 8), isIPv6: true)
      // Multicast with scope 2 (ff02::/16, ff12::/16, ...), or the unspecified address a
      // general query names.
      return group == .zeroIPv6 || (group.high >> 56 == 0xFF && (group.high >> 48) & 0x0F == 2)
    }
    switch packet.icmpType {
    case 131, 132:
      guard length == 24 else { return .invalid(.mld, .malformedLinkControl) }
      return linkScoped(start + 8) ? .valid(.mld) : .invalid(.mld, .linkControlOffLink)
    case 130:
      guard length == 24 || (length >= 28 && length == 28 + 16 * Int(frame.u16(start + 26)))
      else { return .invalid(.mld, .malformedLinkControl) }
      return linkScoped(start + 8) ? .valid(.mld) : .invalid(.mld, .linkControlOffLink)
    default:
      guard length >= 8 else { return .invalid(.mld, .malformedLinkControl) }
      var offset = start + 8
      for _ in 0..<Int(frame.u16(start + 6)) {
        guard offset + 20 <= end, frame.u8(offset + 1) == 0, frame.u16(offset + 2) == 0 else {
          return .invalid(.mld, .malformedLinkControl)
        }
        guard linkScoped(offset + 4) else { return .invalid(.mld, .linkControlOffLink) }
        offset += 20
      }
      return offset == end ? .valid(.mld) : .invalid(.mld, .malformedLinkControl)
    }
  }

  /// IGMP: TTL 1 to a link-local group (224.0.0.0/24), no IP option but router alert, every
  /// group it names link-local, no source lists or auxiliary data.
  private func igmp(_ packet: DecodedPacket, _ frame: UnsafeRawBufferPointer) -> Result {
    let start = packet.transportOffset
    let end = packet.networkEnd
    let length = end - start
    if let problem = extrasProblem(packet, needed: [.routerAlert]) {
      return .invalid(.igmp, problem)
    }
    guard packet.hopLimit == 1, !packet.isFragment, length >= 8 else {
      return .invalid(.igmp, .malformedLinkControl)
    }
    guard packet.destination.isLinkLocalMulticast else {
      return .invalid(.igmp, .linkControlOffLink)
    }
    func linkLocal(_ offset: Int) -> Bool {
      let group = IPAddress(ipv4: frame.u32(offset))
      return group == .zero || group.isLinkLocalMulticast
    }
    switch frame.u8(start) {
    case 0x11:
      guard length == 8 || (length >= 12 && length == 12 + 4 * Int(frame.u16(start + 10))) else {
        return .invalid(.igmp, .malformedLinkControl)
      }
      return linkLocal(start + 4) ? .valid(.igmp) : .invalid(.igmp, .linkControlOffLink)
    case 0x12, 0x16, 0x17:
      guard length == 8 else { return .invalid(.igmp, .malformedLinkControl) }
      return linkLocal(start + 4) ? .valid(.igmp) : .invalid(.igmp, .linkControlOffLink)
    case 0x22:
      var offset = start + 8
      for _ in 0..<Int(frame.u16(start + 6)) {
        guard offset + 8 <= end, frame.u8(offset + 1) == 0, frame.u16(offset + 2) == 0 else {
          return .invalid(.igmp, .malformedLinkControl)
        }
        guard linkLocal(offset + 4) else { return .invalid(.igmp, .linkControlOffLink) }
        offset += 8
      }
      return offset == end ? .valid(.igmp) : .invalid(.igmp, .malformedLinkControl)
    default:
      return .invalid(.igmp, .malformedLinkControl)
    }
  }
}
