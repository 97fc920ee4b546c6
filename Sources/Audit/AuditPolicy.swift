/// The capture's positive-control packet: UDP to `destination` whose payload starts with
/// `payloadPrefix`. Matching packets (and ICMP errors quoting a UDP packet to `destination`)
/// are counted as control, never as leaks; when a probe is
/// configured and none is seen, the verdict is inconclusive.
public struct SyncProbe: Sendable, Hashable {
  public var destination: Endpoint
  public var payloadPrefix: [UInt8]

  public init(destination: Endpoint, payloadPrefix: [UInt8]) {
    self.destination = destination
    self.payloadPrefix = payloadPrefix
  }

  /// The payload prefix `failclosed` uses for its own probes.
  public static let defaultPrefix = Array("failclosed-sync-probe".utf8)
}

/// Deny by default: a packet is allowed only if it goes to an allowed {address, port}, comes
/// back from one, or is an ICMP error about such a flow.
public struct AuditPolicy: Sendable {
  public var allowed: Set<Endpoint>
  public var syncProbe: SyncProbe?
  /// The device's own addresses. When given, a packet to the device from a peer it never
  /// contacted is `inbound`, not a leak; when empty, every packet not allowed is judged.
  public var deviceAddresses: Set<IPAddress>
  /// Memory bounds: distinct flows and leak groups kept; beyond them packets are still judged
  /// and counted, and the overflow is reported.
  public var maximumFlows: Int
  public var maximumLeakGroups: Int

  public init(
    allowed: Set<Endpoint> = [], syncProbe: SyncProbe? = nil, deviceAddresses: Set<IPAddress> = [],
    maximumFlows: Int = 100_000, maximumLeakGroups: Int = 10_000
  ) {
    self.allowed = allowed
    self.syncProbe = syncProbe
    self.deviceAddresses = deviceAddresses
    self.maximumFlows = maximumFlows
    self.maximumLeakGroups = maximumLeakGroups
  }

  /// Judges one decoded packet (ports already resolved for later fragments). `payload` is the
  /// transport payload, used only to recognise the sync probe.
  public func judge(_ packet: DecodedPacket, payload: UnsafeRawBufferPointer) -> PacketDisposition {
    switch packet.network {
    case .arp:
      return .linkControl(.arp)
    case .otherLink, .undecodable:
      return .leak(.otherProtocol)
    case .ipv4, .ipv6:
      break
    }
    if let kind = linkControl(packet) { return .linkControl(kind) }
    if let probe = syncProbe, packet.ipProtocol == IPProtocolNumber.udp, packet.hasPorts,
      packet.destination == probe.destination.address,
      packet.destinationPort == probe.destination.port,
      payload.count >= probe.payloadPrefix.count,
      zip(payload, probe.payloadPrefix).allSatisfy({ $0 == $1 })
    {
      return .control
    }
    // The error a probe to a closed port draws (port unreachable) belongs to the control too.
    if let probe = syncProbe, packet.hasQuotedPacket, packet.quotedProtocol == IPProtocolNumber.udp,
      packet.quotedDestination == probe.destination
    {
      return .control
    }
    if !allowed.isEmpty {
      let hasPorts = packet.hasPorts
      if hasPorts {
        if allowed.contains(packet.destinationEndpoint) || allowed.contains(packet.sourceEndpoint) {
          return .allowed
        }
      }
      if packet.hasQuotedPacket
        && (allowed.contains(packet.quotedDestination) || allowed.contains(packet.quotedSource))
      {
        return .allowed
      }
    }
    if !deviceAddresses.isEmpty && !deviceAddresses.contains(packet.source)
      && deviceAddresses.contains(packet.destination)
    {
      return .inbound
    }
    return .leak(leakClass(packet))
  }

  @inline(__always)
  func leakClass(_ packet: DecodedPacket) -> LeakClass {
    let proto = packet.ipProtocol
    if proto == IPProtocolNumber.tcp || proto == IPProtocolNumber.udp,
      packet.hasPorts,
      LeakClass.isDNSPort(packet.destinationPort) || LeakClass.isDNSPort(packet.sourcePort)
    {
      return .dns
    }
    if packet.destination.isMulticastOrBroadcast { return .multicast }
    if packet.network == .ipv6 { return .ipv6 }
    switch proto {
    case IPProtocolNumber.tcp: return .tcp
    case IPProtocolNumber.udp: return .udp
    case IPProtocolNumber.icmp: return .icmp
    default: return .otherProtocol
    }
  }

  @inline(__always)
  func linkControl(_ packet: DecodedPacket) -> LinkControlKind? {
    if packet.ipProtocol == IPProtocolNumber.icmpv6 && packet.network == .ipv6 {
      switch packet.icmpType {
      case 133, 134, 135, 136, 137:
        return packet.hopLimit == 255 ? .neighbourDiscovery : nil
      case 130, 131, 132, 143:
        // MLD travels with hop limit 1 to link-local groups (ff02::16 for MLDv2 reports).
        return packet.destination.isLinkLocalMulticast && packet.hopLimit == 1 ? .mld : nil
      default:
        return nil
      }
    }
    if packet.ipProtocol == IPProtocolNumber.igmp && packet.network == .ipv4
      && packet.destination.isLinkLocalMulticast
    {
      return .igmp
    }
    return nil
  }
}
