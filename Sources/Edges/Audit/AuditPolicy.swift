/// Deny by default, and direction first. What leaves the device must go to an allowed
/// {address, port} in the transport its role speaks (``EndpointRole``: a relay, a DirPort
/// and a bridge speak TCP only), and the device's bytes on such a flow must be what that
/// role speaks (``TorEndpointContent``, checked by the auditor); what arrives may come from anywhere (it left nothing), and counts as the
/// reply of an allowed flow only when it comes from an allowed endpoint to the device. The
/// direction comes from the capture, never from a packet's own addresses (see
/// ``PacketDirection``), so a packet that leaves with an allowed endpoint forged as its
/// source is judged by where it goes. Exemptions are narrow and checked to the byte: ICMP
/// errors only towards the endpoint of the allowed flow they quote, with a quote that fits
/// that flow and the size an error may have; link control only well formed and link-scoped;
/// the positive control only as the harness sends it. Where the policy cannot tell (no
/// direction, no device addresses), a packet from an allowed endpoint is `undecided`, which
/// makes the verdict inconclusive, never a pass.
public struct AuditPolicy: Sendable {
  public var allowed: AllowedEndpoints
  public var syncProbe: SyncProbe?
  /// The device's own addresses. Used for the direction when the capture gives none, and to
  /// check that replies and errors name the device.
  public var deviceAddresses: Set<IPAddress>
  /// The device's own MACs (low 48 bits): an Ethernet frame from one of them left the device.
  public var deviceLinkAddresses: [UInt64]
  /// The device's link prefixes: the only addresses ARP and neighbour discovery may name
  /// (IPv6 link-local always counts). Empty: not checked.
  public var linkNetworks: [IPNetwork]
  /// Memory bounds: distinct flows and leak groups kept; beyond them packets are still judged
  /// and counted, and the overflow is reported.
  public var maximumFlows: Int
  public var maximumLeakGroups: Int
  /// The capture sits on the far end of the device's link (the censor's peer interface), so a
  /// cooked packet's kernel direction is reversed (``PacketDecoder/farEndOfLink``). It sees
  /// what the device sends even when the device's own packet taps are bypassed.
  public var farEndOfLink: Bool

  public init(
    allowed: AllowedEndpoints = [], syncProbe: SyncProbe? = nil,
    deviceAddresses: Set<IPAddress> = [],
    deviceLinkAddresses: [UInt64] = [], linkNetworks: [IPNetwork] = [],
    maximumFlows: Int = 100_000, maximumLeakGroups: Int = 10_000, farEndOfLink: Bool = false
  ) {
    self.farEndOfLink = farEndOfLink
    self.allowed = allowed
    self.syncProbe = syncProbe
    self.deviceAddresses = deviceAddresses
    self.deviceLinkAddresses = deviceLinkAddresses
    self.linkNetworks = linkNetworks
    self.maximumFlows = maximumFlows
    self.maximumLeakGroups = maximumLeakGroups
  }

  /// A judgement and, for a leak, why.
  public struct Judgement: Sendable, Equatable {
    public var disposition: PacketDisposition
    public var reason: LeakReason

    init(_ disposition: PacketDisposition, _ reason: LeakReason = .destinationNotAllowed) {
      self.disposition = disposition
      self.reason = reason
    }
  }

  /// The packet's direction: the capture's when it has one, else from the device's
  /// addresses (from one: outbound; to one: inbound; neither: it cannot be a reply to the
  /// device, so it is judged as leaving), else unknown.
  @inline(__always)
  public func direction(of packet: DecodedPacket) -> PacketDirection {
    if packet.direction != .unknown || deviceAddresses.isEmpty { return packet.direction }
    guard packet.network == .ipv4 || packet.network == .ipv6 else { return .unknown }
    if deviceAddresses.contains(packet.source) { return .outbound }
    if deviceAddresses.contains(packet.destination) { return .inbound }
    return .outbound
  }

  /// Judges one decoded packet whose `direction` is already resolved (ports already resolved
  /// for later fragments). `frame` holds the captured bytes the decoder's offsets point into;
  /// `payload` the transport payload.
  public func judge(
    _ packet: DecodedPacket, frame: UnsafeRawBufferPointer, payload: UnsafeRawBufferPointer
  ) -> Judgement {
    let direction = packet.direction
    let validator = LinkControlValidator(linkNetworks: linkNetworks)
    switch packet.network {
    case .arp:
      if direction == .inbound { return Judgement(.linkControl(.arp)) }
      switch validator.arp(packet, frame) {
      case .valid(let kind): return Judgement(.linkControl(kind))
      case .invalid(_, let reason): return Judgement(.leak(.otherProtocol), reason)
      }
    case .otherLink:
      return direction == .inbound ? Judgement(.inbound) : Judgement(.leak(.otherProtocol), .notIP)
    case .undecodable:
      return direction == .inbound
        ? Judgement(.inbound) : Judgement(.leak(.otherProtocol), .undecodable)
    case .ipv4, .ipv6:
      break
    }
    if direction == .inbound { return judgeArriving(packet) }

    // Leaving the device, or of unknown direction.
    if let result = validator.ipControl(packet, frame) {
      switch result {
      case .valid(let kind): return Judgement(.linkControl(kind))
      case .invalid(let kind, let reason):
        let leakClass: LeakClass =
          packet.destination.isMulticastOrBroadcast
          ? .multicast : (kind == .igmp ? .otherProtocol : .ipv6)
        return Judgement(.leak(leakClass), reason)
      }
    }
    if let probe = syncProbe, packet.ipProtocol == IPProtocolNumber.udp, packet.hasPorts,
      packet.destinationEndpoint == probe.destination, packet.anomalies.isEmpty,
      packet.networkExtras.isEmpty, !packet.isFragment, probe.matches(payload)
    {
      return Judgement(.control)
    }
    if direction == .unknown, let probe = syncProbe, isProbeError(packet, probe) {
      return Judgement(.control)
    }
    if let reason = Self.anomalyReason(packet.anomalies) {
      return Judgement(.leak(leakClass(packet)), reason)
    }
    if packet.hasQuotedPacket { return judgeLeavingError(packet, direction) }
    if packet.hasPorts, let role = allowed.role(of: packet.destinationEndpoint) {
      if role.transport == packet.ipProtocol { return Judgement(.allowed) }
      return Judgement(.leak(leakClass(packet, payload)), .protocolNotAllowed)
    }
    let fromAllowed =
      packet.hasPorts
      ? allowed.contains(packet.sourceEndpoint)
      : allowed.containsAddress(packet.source)
    if fromAllowed {
      // Unknown direction: a reply from the allowed endpoint, or a forged packet leaving.
      return direction == .unknown
        ? Judgement(.undecided) : Judgement(.leak(leakClass(packet)), .forgedSource)
    }
    // ICMP or another protocol to an allowed address: the endpoint speaks only its transport.
    if !packet.hasPorts && allowed.containsAddress(packet.destination) {
      return Judgement(.leak(leakClass(packet)), .protocolNotAllowed)
    }
    return Judgement(.leak(leakClass(packet)), .destinationNotAllowed)
  }

  /// Arriving packets never leak: replies of allowed flows, errors about them and the probe's
  /// own error are named as such, the rest is inbound.
  private func judgeArriving(_ packet: DecodedPacket) -> Judgement {
    if let kind = linkControlKind(packet) {
      return Judgement(.linkControl(kind))
    }
    let toDevice = deviceAddresses.isEmpty || deviceAddresses.contains(packet.destination)
    if let probe = syncProbe, isProbeError(packet, probe) { return Judgement(.control) }
    if packet.hasPorts && toDevice
      && allowed.allows(packet.sourceEndpoint, transport: packet.ipProtocol)
      && packet.anomalies.isEmpty
    {
      return Judgement(.allowed)
    }
    if packet.hasQuotedPacket && toDevice && quotesDeviceFlowToAllowed(packet)
      && errorFits(packet) == nil
    {
      return Judgement(.allowed)
    }
    return Judgement(.inbound)
  }

  /// An ICMP error that is the reply to the probe: from the probe's destination, quoting UDP
  /// to it.
  private func isProbeError(_ packet: DecodedPacket, _ probe: SyncProbe) -> Bool {
    packet.hasQuotedPacket && packet.quotedProtocol == IPProtocolNumber.udp
      && packet.quotedDestination == probe.destination
      && packet.source == probe.destination.address
  }

  /// An ICMP error leaving the device: allowed only towards the allowed endpoint whose packet
  /// it quotes, the quote naming that endpoint as source and the device as destination.
  private func judgeLeavingError(_ packet: DecodedPacket, _ direction: PacketDirection)
    -> Judgement
  {
    let errorClass: LeakClass = packet.network == .ipv6 ? .ipv6 : .icmp
    if let reason = errorFits(packet) { return Judgement(.leak(errorClass), reason) }
    // An error needs no IPv4 option and no IPv6 extension header.
    if !packet.networkExtras.isEmpty { return Judgement(.leak(errorClass), .headerNotNeeded) }
    let quotedFromAllowed = quotedEndpointAllowed(packet.quotedSource, packet.quotedProtocol)
    if quotedFromAllowed {
      guard packet.destination == packet.quotedSource.address,
        packet.quotedDestination.address == packet.source,
        deviceAddresses.isEmpty || deviceAddresses.contains(packet.source)
      else { return Judgement(.leak(errorClass), .icmpErrorMisdirected) }
      return Judgement(.allowed)
    }
    // Unknown direction: an error arriving about the device's own flow to an allowed
    // endpoint is as plausible, and harmless.
    if direction == .unknown && quotesDeviceFlowToAllowed(packet) { return Judgement(.allowed) }
    let quotesAllowed = quotedEndpointAllowed(packet.quotedDestination, packet.quotedProtocol)
    return Judgement(
      .leak(errorClass), quotesAllowed ? .icmpErrorMisdirected : .destinationNotAllowed)
  }

  /// The error is addressed to the source of the packet it quotes, which went to an allowed
  /// endpoint.
  private func quotesDeviceFlowToAllowed(_ packet: DecodedPacket) -> Bool {
    quotedEndpointAllowed(packet.quotedDestination, packet.quotedProtocol)
      && packet.quotedSource.address == packet.destination
  }

  private func quotedEndpointAllowed(_ endpoint: Endpoint, _ proto: UInt8) -> Bool {
    allowed.allows(endpoint, transport: proto)
  }

  /// Nil when the error has the size an error may have and a quote consistent with itself:
  /// same IP version, no more bytes than the quoted packet had, at most 576 bytes (IPv4,
  /// RFC 1812) or 1280 (IPv6, RFC 4443) in all.
  private func errorFits(_ packet: DecodedPacket) -> LeakReason? {
    let limit = packet.network == .ipv6 ? 1280 : 576
    if packet.ipTotalLength > limit { return .icmpErrorOversized }
    if packet.quotedSource.address.isIPv6 != (packet.network == .ipv6)
      || packet.quotedBytes > packet.quotedClaimedLength
    {
      return .icmpQuoteInconsistent
    }
    return nil
  }

  static func anomalyReason(_ anomalies: PacketAnomalies) -> LeakReason? {
    if anomalies.isEmpty { return nil }
    if anomalies.contains(.fragmentOverlap) { return .fragmentOverlap }
    if anomalies.contains(.routingHeader) { return .routingHeader }
    if anomalies.contains(.extensionOptionData) { return .extensionOptions }
    if anomalies.contains(.trailingData) { return .trailingData }
    if anomalies.contains(.tcpOptionData) { return .tcpOptions }
    return .ipOptions
  }

  /// As ``leakClass(_:)``, and UDP whose payload is a DNS query counts as DNS on any port
  /// (a query sent to a relay's port is still a name in clear).
  func leakClass(_ packet: DecodedPacket, _ payload: UnsafeRawBufferPointer) -> LeakClass {
    if packet.ipProtocol == IPProtocolNumber.udp, packet.hasPorts, !packet.isLaterFragment,
      !DNSQuestionParser.questionNames(payload).isEmpty
    {
      return .dns
    }
    return leakClass(packet)
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

  /// The link-control kind a packet claims to be, without validating it (arriving packets
  /// are counted by kind; leaving ones go through ``LinkControlValidator``).
  @inline(__always)
  func linkControlKind(_ packet: DecodedPacket) -> LinkControlKind? {
    if packet.ipProtocol == IPProtocolNumber.icmpv6 && packet.network == .ipv6 {
      switch packet.icmpType {
      case 133, 134, 135, 136, 137: return .neighbourDiscovery
      case 130, 131, 132, 143: return .mld
      default: return nil
      }
    }
    if packet.ipProtocol == IPProtocolNumber.igmp && packet.network == .ipv4 { return .igmp }
    return nil
  }
}
