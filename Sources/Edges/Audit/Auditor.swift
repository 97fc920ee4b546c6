/// Streams packets through the decoder and the policy, one at a time, keeping flows and leak
/// groups in bounded tables: memory does not grow with the capture's length. Not thread-safe:
/// one auditor belongs to one capture thread (or one file reader).
public final class Auditor {
  /// All state lives in one struct. An auditor belongs to one thread (see above), so the
  /// per-packet dynamic exclusivity check is left out.
  @exclusivity(unchecked) private var core: AuditorCore

  public init(linkType: LinkType, policy: AuditPolicy) {
    core = AuditorCore(linkType: linkType, policy: policy)
  }

  public var linkType: LinkType { core.linkType }
  public var policy: AuditPolicy { core.policy }
  public var packetCount: Int { core.statistics.packets }
  public var controlPacketCount: Int { core.statistics.controlPackets }
  public var leakPacketCount: Int { core.statistics.leakPackets }

  /// Records why the capture cannot vouch for a pass (late start, a read error...).
  public func noteInconclusive(_ reason: InconclusiveReason) {
    core.notedReasons.append(reason)
  }

  /// Decodes a frame the way this auditor does (with the policy's device MACs, so Ethernet
  /// frames get their direction).
  public func decode(_ frame: UnsafeRawBufferPointer) -> DecodedPacket {
    core.decoder.decode(frame)
  }

  /// Judges one packet. `timestamp` is nanoseconds since the Unix epoch; `wireLength` the
  /// packet's original length; `frame` its captured bytes (valid only during the call).
  @discardableResult
  public func consume(timestamp: Int64, wireLength: Int, frame: UnsafeRawBufferPointer)
    -> PacketDisposition
  {
    core.consume(timestamp: timestamp, wireLength: wireLength, frame: frame)
  }

  /// As ``consume(timestamp:wireLength:frame:)`` with the frame already decoded (the capture
  /// decodes once for its observer and the auditor).
  @discardableResult
  public func consume(
    timestamp: Int64, wireLength: Int, frame: UnsafeRawBufferPointer,
    packet: inout DecodedPacket
  ) -> PacketDisposition {
    core.consume(timestamp: timestamp, wireLength: wireLength, frame: frame, packet: &packet)
  }

  /// The report so far. `capture` carries pcap_stats for a live capture (drops make a
  /// no-leak verdict inconclusive).
  public func report(capture: CaptureStatistics? = nil) -> AuditReport {
    core.report(capture: capture)
  }
}

struct AuditorCore {
  let linkType: LinkType
  let policy: AuditPolicy
  let decoder: PacketDecoder
  var fragments = FragmentTracker()
  private var flows: FlowTable
  private var leakIndex: [LeakKey: Int] = [:]
  private var leaks: [LeakState] = []
  private var linkControl = LinkControlSummary()
  var statistics = AuditStatistics()
  var notedReasons: [InconclusiveReason] = []
  private var firstTimestamp: Int64?
  private var lastTimestamp: Int64 = 0
  /// The most recent flow, checked before the table: bulk traffic comes in runs.
  private var lastFlowKey: FlowKey?
  private var lastFlowIndex = 0
  /// Positive-control packets seen leaving (their errors are not counted).
  private var probePackets = 0
  /// The first flow to a Tor endpoint whose content could not be followed, and why.
  private var firstUnverified: String?

  private struct LeakKey: Hashable {
    var leakClass: LeakClass
    var proto: UInt8
    var destination: Endpoint
    var reason: LeakReason
  }

  private struct LeakState {
    var key: LeakKey
    var direction: PacketDirection
    /// What the first packet showed beyond its addresses: the quoted flow, the anomaly.
    var evidence: String?
    /// The first packet's transport payload, hex, at most 64 bytes: what it carried.
    var sample: String
    var sources: [Endpoint]
    var names: [String]
    var first: Int64
    var last: Int64
    var packets: Int
    var bytes: Int
    var replies: Int
  }

  init(linkType: LinkType, policy: AuditPolicy) {
    self.linkType = linkType
    self.policy = policy
    self.decoder = PacketDecoder(
      linkType: linkType, deviceLinkAddresses: policy.deviceLinkAddresses,
      farEndOfLink: policy.farEndOfLink)
    self.flows = FlowTable(capacity: policy.maximumFlows)
    statistics.linkType = linkType.name
  }

  /// Decodes in place: decoding through the class's property copied the decoder (a retain
  /// and release of its MAC list) and the decoded packet (memmoves) for every packet.
  @inline(__always)
  mutating func consume(timestamp: Int64, wireLength: Int, frame: UnsafeRawBufferPointer)
    -> PacketDisposition
  {
    var packet = DecodedPacket()
    decoder.decode(frame, into: &packet)
    return consume(timestamp: timestamp, wireLength: wireLength, frame: frame, packet: &packet)
  }

  mutating func consume(
    timestamp: Int64, wireLength: Int, frame: UnsafeRawBufferPointer,
    packet: inout DecodedPacket
  ) -> PacketDisposition {
    if firstTimestamp == nil { firstTimestamp = timestamp }
    lastTimestamp = timestamp
    statistics.packets += 1
    statistics.bytes += wireLength
    if packet.isFragment { fragments.resolve(&packet) }
    packet.direction = policy.direction(of: packet)
    if packet.network == .undecodable { statistics.undecodablePackets += 1 }
    let payload = UnsafeRawBufferPointer(
      rebasing: frame[packet.payloadOffset..<(packet.payloadOffset + packet.payloadLength)])

    let isIP = packet.network == .ipv4 || packet.network == .ipv6
    var flowIndex: Int?
    var disposition: PacketDisposition
    var reason = LeakReason.destinationNotAllowed
    if isIP {
      let key = FlowKey(
        proto: packet.ipProtocol, source: packet.source, destination: packet.destination,
        sourcePort: packet.hasPorts ? packet.sourcePort : 0,
        destinationPort: packet.hasPorts ? packet.destinationPort : 0)
      if key == lastFlowKey {
        flowIndex = lastFlowIndex
      } else if let index = flows.find(key) {
        flowIndex = index
        lastFlowKey = key
        lastFlowIndex = index
      }
      // Allowance is a property of the endpoints and the direction, so an allowed TCP or UDP
      // flow stays allowed: its later packets skip the policy (the hot path of bulk Tor
      // traffic), unless they go the other way or carry an anomaly (IP options, a routing
      // header, overlapping fragments).
      let ported = packet.hasPorts && (key.proto == IPProtocolNumber.tcp || key.proto == 17)
      if ported, let index = flowIndex, flows.flows[index].disposition == .allowed,
        flows.flows[index].direction == packet.direction, packet.anomalies.isEmpty
      {
        disposition = .allowed
      } else {
        let judgement = policy.judge(packet, frame: frame, payload: payload)
        disposition = judgement.disposition
        reason = judgement.reason
        // What arrives on a leaking flow's reverse is that leak's reply; what leaves stays a
        // leak. With no direction known, a leak answering a leak counts as its reply.
        if packet.direction != .outbound, let reverse = flows.find(key.reversed),
          case .leak(let leakClass) = flows.flows[reverse].disposition
        {
          switch disposition {
          case .inbound, .leak, .undecided: disposition = .leakReply(leakClass)
          default: break
          }
        }
        if let index = flowIndex {
          // The flow remembers its worst judgement.
          let existing = flows.flows[index].disposition
          if case .leak = disposition, existing != disposition {
            flows.update(index) { $0.disposition = disposition }
          }
        } else {
          var state = FlowState(
            key: key, ipv6: packet.network == .ipv6, first: timestamp, last: timestamp,
            packets: 0, bytes: 0, disposition: disposition, direction: packet.direction)
          // A flow the device opens to a Tor endpoint has its bytes followed from here.
          if disposition == .allowed && ported && key.proto == IPProtocolNumber.tcp
            && packet.direction != .inbound,
            let role = policy.allowed.role(of: packet.destinationEndpoint), role.checksContent
          {
            state.content = TorEndpointContent(role: role)
          }
          if let index = flows.insert(state) {
            flowIndex = index
            lastFlowKey = key
            lastFlowIndex = index
          } else {
            statistics.flowOverflowPackets += 1
          }
        }
      }
    } else {
      let judgement = policy.judge(packet, frame: frame, payload: payload)
      disposition = judgement.disposition
      reason = judgement.reason
    }
    var contentEvidence: String?
    if disposition == .allowed && packet.ipProtocol == IPProtocolNumber.tcp && packet.hasPorts
      && packet.direction != .inbound
    {
      switch checkContent(packet, payload, flowIndex) {
      case .fine, .unverifiable:
        break
      case .failed(let evidence):
        disposition = .leak(.clearOnTorEndpoint)
        reason = .contentNotAllowed
        contentEvidence = evidence
      case .alreadyFailed:
        disposition = .leak(.clearOnTorEndpoint)
        reason = .contentNotAllowed
      }
    }
    if disposition == .control && packet.ipProtocol == IPProtocolNumber.udp {
      probePackets += 1
      if probePackets > SyncProbe.maximumPackets {
        disposition = .leak(.udp)
        reason = .probeImitation
      }
    }
    if let flowIndex {
      flows.update(flowIndex) {
        $0.last = timestamp
        $0.packets += 1
        $0.bytes += wireLength
      }
    }

    var names: [String] = []
    switch disposition {
    case .allowed:
      statistics.allowedPackets += 1
    case .control:
      statistics.controlPackets += 1
    case .inbound:
      statistics.inboundPackets += 1
    case .undecided:
      statistics.undecidedPackets += 1
    case .linkControl(let kind):
      statistics.linkControlPackets += 1
      switch kind {
      case .arp: linkControl.arp += 1
      case .neighbourDiscovery: linkControl.neighbourDiscovery += 1
      case .mld: linkControl.mld += 1
      case .igmp: linkControl.igmp += 1
      }
    case .leak(let leakClass):
      statistics.leakPackets += 1
      names = extractNames(packet, payload, leakClass)
      recordLeak(
        leakClass, reason, packet, frame, payload, timestamp, wireLength, names, contentEvidence)
    case .leakReply(let leakClass):
      statistics.leakReplyPackets += 1
      names = extractNames(packet, payload, leakClass)
      recordLeakReply(leakClass, packet, names)
    }
    if !names.isEmpty, let flowIndex {
      flows.update(flowIndex) { flow in
        for name in names where !flow.names.contains(name) && flow.names.count < 8 {
          flow.names.append(name)
        }
      }
    }
    return disposition
  }

  private enum ContentResult {
    case fine, unverifiable, alreadyFailed
    case failed(String)
  }

  /// Feeds a packet the device sent to a Tor endpoint to its flow's content check; on a
  /// failure, the evidence: where in the stream, what was there, what the role expects.
  @inline(__always)
  private mutating func checkContent(
    _ packet: DecodedPacket, _ payload: UnsafeRawBufferPointer, _ flowIndex: Int?
  ) -> ContentResult {
    guard let index = flowIndex else {
      // Beyond the flow cap nothing can be followed.
      if packet.payloadLength > 0, let role = policy.allowed.role(of: packet.destinationEndpoint),
        role.checksContent
      {
        noteUnverified(Self.flowText(packet, role), "the flow table is full")
      }
      return .unverifiable
    }
    guard let role = flows.flows[index].content?.role else { return .fine }
    var outcome = TorEndpointContent.Outcome.fine
    flows.update(index) { flow in
      if packet.isFragment {
        // No Tor client's TCP is fragmented (Linux sets DF and follows the path MTU), and
        // the check does not reassemble: the flow's bytes are not followed.
        if flow.content!.giveUp() {
          outcome = .unverifiable("its bytes were sent in IP fragments, which are not reassembled")
        } else if flow.content!.phase == .failed {
          outcome = .alreadyFailed
        }
        return
      }
      // The segment's length as its IP header says, beyond what the capture kept.
      let segment =
        packet.ipTotalLength > 0
        ? packet.networkOffset + packet.ipTotalLength - packet.payloadOffset : payload.count
      outcome = flow.content!.step(
        flags: packet.tcpFlags, sequence: packet.tcpSequence, payload: payload,
        missing: max(0, segment - payload.count))
    }
    switch outcome {
    case .fine: return .fine
    case .alreadyFailed: return .alreadyFailed
    case .unverifiable(let why):
      noteUnverified(Self.flowText(packet, role), why)
      return .unverifiable
    case .failed(let streamOffset, let payloadIndex, let expected):
      flows.update(index) { $0.disposition = .leak(.clearOnTorEndpoint) }
      let rest = UnsafeRawBufferPointer(rebasing: payload[min(payloadIndex, payload.count)...])
      let found = ClearProtocolRecogniser.recognise(
        UnsafeRawBufferPointer(rebasing: rest.prefix(16)), firstSegment: rest.count,
        complete: true)
      return .failed(
        "the device's bytes to \(packet.destinationEndpoint), \(role.noun), at stream byte "
          + "\(streamOffset): \(ClearProtocolRecogniser.preview(rest))"
          + (found.map { " (\($0))" } ?? "") + "; expected \(expected)")
    }
  }

  private static func flowText(_ packet: DecodedPacket, _ role: EndpointRole) -> String {
    "tcp \(packet.sourceEndpoint) -> \(packet.destinationEndpoint) (\(role.noun))"
  }

  private mutating func noteUnverified(_ flow: String, _ why: String) {
    statistics.unverifiedFlows += 1
    if firstUnverified == nil { firstUnverified = "\(flow): \(why)" }
  }

  /// Names in clear: DNS questions on DNS ports (and in any UDP leak classed DNS), TLS SNI,
  /// HTTP Host. Only leaks pay for this.
  private func extractNames(
    _ packet: DecodedPacket, _ payload: UnsafeRawBufferPointer, _ leakClass: LeakClass
  ) -> [String] {
    guard packet.hasPorts, !packet.isLaterFragment, !payload.isEmpty else { return [] }
    let dnsPort =
      LeakClass.isDNSPort(packet.destinationPort) || LeakClass.isDNSPort(packet.sourcePort)
    let dnsPlain = dnsPort && packet.destinationPort != 853 && packet.sourcePort != 853
    if packet.ipProtocol == IPProtocolNumber.udp {
      return dnsPlain || leakClass == .dns ? DNSQuestionParser.questionNames(payload) : []
    }
    guard packet.ipProtocol == IPProtocolNumber.tcp else { return [] }
    if dnsPlain { return DNSQuestionParser.questionNamesOverTCP(payload) }
    if TLSClientHelloParser.looksLikeClientHello(payload) {
      return TLSClientHelloParser.serverName(payload).map { [$0] } ?? []
    }
    if HTTPHostParser.mayBeRequest(payload) {
      return HTTPHostParser.host(payload).map { [$0] } ?? []
    }
    return []
  }

  private func leakDestination(_ packet: DecodedPacket) -> Endpoint {
    Endpoint(address: packet.destination, port: packet.hasPorts ? packet.destinationPort : 0)
  }

  private mutating func recordLeak(
    _ leakClass: LeakClass, _ reason: LeakReason, _ packet: DecodedPacket,
    _ frame: UnsafeRawBufferPointer, _ payload: UnsafeRawBufferPointer, _ timestamp: Int64,
    _ length: Int, _ names: [String], _ contentEvidence: String?
  ) {
    let isIP = packet.network == .ipv4 || packet.network == .ipv6
    let key = LeakKey(
      leakClass: leakClass, proto: isIP ? packet.ipProtocol : 255,
      destination: isIP ? leakDestination(packet) : Endpoint(address: .zero, port: 0),
      reason: reason)
    let source = Endpoint(address: packet.source, port: packet.hasPorts ? packet.sourcePort : 0)
    if let index = leakIndex[key] {
      leaks[index].last = timestamp
      leaks[index].packets += 1
      leaks[index].bytes += length
      if leaks[index].sources.count < 4 && !leaks[index].sources.contains(source) {
        leaks[index].sources.append(source)
      }
      for name in names where !leaks[index].names.contains(name) && leaks[index].names.count < 32 {
        leaks[index].names.append(name)
      }
      return
    }
    guard leaks.count < policy.maximumLeakGroups else {
      statistics.leakGroupOverflowPackets += 1
      return
    }
    leakIndex[key] = leaks.count
    leaks.append(
      LeakState(
        key: key, direction: packet.direction,
        evidence: contentEvidence ?? evidence(reason, packet, frame),
        sample: Self.hex(payload.prefix(64)), sources: [source], names: names, first: timestamp,
        last: timestamp, packets: 1, bytes: length, replies: 0))
  }

  /// A sentence on what the first packet of a leak showed beyond its addresses.
  private func evidence(
    _ reason: LeakReason, _ packet: DecodedPacket, _ frame: UnsafeRawBufferPointer
  ) -> String? {
    var parts: [String] = []
    if packet.hasQuotedPacket {
      parts.append(
        "quotes \(IPProtocolNumber.name(packet.quotedProtocol)) \(packet.quotedSource) -> "
          + "\(packet.quotedDestination) (\(packet.quotedBytes) bytes quoted, the quoted packet "
          + "claims \(packet.quotedClaimedLength)); the error is \(packet.ipTotalLength) bytes")
    }
    switch reason {
    case .forgedSource:
      parts.append("left the device with the allowed endpoint \(packet.sourceEndpoint) as source")
    case .fragmentOverlap:
      parts.append("fragment at byte offset \(packet.fragmentOffset) (id \(packet.fragmentID))")
    case .ipOptions:
      var kinds: [String] = []
      if packet.anomalies.contains(.sourceRoute) { kinds.append("source route") }
      if packet.anomalies.contains(.recordRoute) { kinds.append("record route/timestamp") }
      if packet.anomalies.contains(.otherIPOption) { kinds.append("other option") }
      if packet.anomalies.contains(.malformedIPOptions) { kinds.append("malformed options") }
      parts.append("IPv4 options: " + kinds.joined(separator: ", "))
    case .routingHeader:
      parts.append("IPv6 routing header: \(packet.destination) is only a waypoint")
    case .protocolNotAllowed:
      let name = IPProtocolNumber.name(packet.ipProtocol)
      if let role = policy.allowed.role(of: packet.destinationEndpoint) {
        parts.append(
          "\(name) to \(packet.destinationEndpoint), \(role.noun), which speaks "
            + "\(IPProtocolNumber.name(role.transport)) only")
      } else {
        parts.append(
          "\(name) to \(packet.destination), an allowed endpoint's address; only its "
            + "endpoints' own transport is allowed")
      }
    case .extensionOptions, .trailingData, .headerNotNeeded, .malformedLinkControl, .tcpOptions:
      if let text = PacketDecoder.describeExtras(packet, frame) { parts.append(text) }
    default:
      break
    }
    return parts.isEmpty ? nil : parts.joined(separator: "; ")
  }

  private static func hex(_ bytes: Slice<UnsafeRawBufferPointer>) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text: [UInt8] = []
    text.reserveCapacity(bytes.count * 2)
    for byte in bytes {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
  }

  private mutating func recordLeakReply(
    _ leakClass: LeakClass, _ packet: DecodedPacket, _ names: [String]
  ) {
    let destination = Endpoint(
      address: packet.source, port: packet.hasPorts ? packet.sourcePort : 0)
    guard
      let index = leakIndex[
        LeakKey(
          leakClass: leakClass, proto: packet.ipProtocol, destination: destination,
          reason: .destinationNotAllowed)]
        ?? leaks.firstIndex(where: {
          $0.key.leakClass == leakClass && $0.key.proto == packet.ipProtocol
            && $0.key.destination == destination
        })
    else { return }
    leaks[index].replies += 1
    for name in names where !leaks[index].names.contains(name) && leaks[index].names.count < 32 {
      leaks[index].names.append(name)
    }
  }

  func report(capture: CaptureStatistics?) -> AuditReport {
    var reasons = notedReasons
    if let capture, capture.dropped > 0 || capture.interfaceDropped > 0 {
      reasons.append(
        InconclusiveReason(
          .drops,
          "the capture dropped \(capture.dropped) packets (\(capture.interfaceDropped) at the "
            + "interface) of \(capture.received) received"))
    }
    if statistics.undecidedPackets > 0 {
      reasons.append(
        InconclusiveReason(
          .directionUnknown,
          "\(statistics.undecidedPackets) packets came from an allowed endpoint, and the capture "
            + "does not say whether they arrived or left with a forged source: give the "
            + "device's addresses (--device) or MAC (--device-mac), or capture with Linux "
            + "cooked headers (SLL/SLL2), which carry the direction"))
    }
    var unverified = statistics.unverifiedFlows
    var firstUnverified = self.firstUnverified
    for flow in flows.flows {
      guard let content = flow.content, content.startUndecided else { continue }
      unverified += 1
      if firstUnverified == nil {
        firstUnverified =
          "tcp \(Endpoint(address: flow.key.source, port: flow.key.sourcePort)) -> "
          + "\(Endpoint(address: flow.key.destination, port: flow.key.destinationPort)) "
          + "(\(content.role.noun)): the capture ends \(content.streamOffset) bytes into what "
          + "its start must show"
      }
    }
    if unverified > 0, let firstUnverified {
      reasons.append(
        InconclusiveReason(
          .contentUnverified,
          "\(unverified) flows to Tor endpoints could not be checked from their first byte, so "
            + "what they carried is unknown; first: \(firstUnverified)"))
    }
    if policy.syncProbe == nil && statistics.packets == 0 {
      reasons.append(
        InconclusiveReason(.noPackets, "the capture holds no packets: nothing seen proves nothing"))
    }
    if let probe = policy.syncProbe, statistics.controlPackets == 0 {
      if statistics.packets == 0 {
        reasons.append(
          InconclusiveReason(
            .noPackets,
            "the capture holds no packets, not even the positive control to \(probe.destination)"))
      } else {
        reasons.append(
          InconclusiveReason(
            .positiveControlMissing,
            "no positive-control packet (UDP to \(probe.destination)) among "
              + "\(statistics.packets) packets"))
      }
    }
    let verdict: Verdict =
      statistics.leakPackets > 0 ? .leak : (reasons.isEmpty ? .pass : .inconclusive)
    let origin = firstTimestamp ?? 0
    var stats = statistics
    stats.unverifiedFlows = unverified
    stats.firstTime = firstTimestamp.map(Self.seconds)
    stats.lastTime = firstTimestamp == nil ? nil : Self.seconds(lastTimestamp)
    // In the order of their first packets (then class and destination): a flow's leak can be
    // decided at a later packet on a live capture than in its file, and the report must not
    // depend on which read it.
    let ordered = leaks.enumerated().sorted {
      ($0.element.first, $0.element.key.leakClass.rawValue, $0.offset)
        < ($1.element.first, $1.element.key.leakClass.rawValue, $1.offset)
    }.map(\.element)
    let leakRecords = ordered.map { leak in
      LeakRecord(
        leakClass: leak.key.leakClass,
        protocol: leak.key.proto == 255 ? "non-ip" : IPProtocolNumber.name(leak.key.proto),
        destination: leak.key.proto == 255
          ? "-"
          : (leak.key.proto == IPProtocolNumber.tcp || leak.key.proto == IPProtocolNumber.udp)
            ? leak.key.destination.description : leak.key.destination.address.description,
        sources: leak.sources.map(\.description), names: leak.names,
        reason: leak.key.reason.rawValue, direction: leak.direction.description,
        evidence: leak.evidence, sample: leak.sample.isEmpty ? nil : leak.sample,
        firstTime: Self.seconds(leak.first), firstOffset: Self.seconds(leak.first - origin),
        lastTime: Self.seconds(leak.last), packets: leak.packets, bytes: leak.bytes,
        replyPackets: leak.replies)
    }.sorted {
      ($0.firstTime, $0.leakClass, $0.reason ?? "") < ($1.firstTime, $1.leakClass, $1.reason ?? "")
    }
    let flowRecords = flows.flows.map { flow in
      FlowRecord(
        protocol: IPProtocolNumber.name(flow.key.proto), source: flow.key.source.description,
        destination: flow.key.destination.description, sourcePort: flow.key.sourcePort,
        destinationPort: flow.key.destinationPort, firstTime: Self.seconds(flow.first),
        lastTime: Self.seconds(flow.last), packets: flow.packets, bytes: flow.bytes,
        disposition: flow.disposition.label, names: flow.names)
    }
    return AuditReport(
      verdict: verdict, reasons: reasons, allowed: policy.allowed.descriptions,
      syncProbe: policy.syncProbe.map { "udp \($0.destination)" }, leaks: leakRecords,
      linkControl: linkControl, statistics: stats, capture: capture, flows: flowRecords)
  }

  private static func seconds(_ nanoseconds: Int64) -> Double {
    Double(nanoseconds) / 1e9
  }
}
