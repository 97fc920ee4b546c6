/// Streams packets through the decoder and the policy, one at a time, keeping flows and leak
/// groups in bounded tables: memory does not grow with the capture's length. Not thread-safe:
/// one auditor belongs to one capture thread (or one file reader).
public final class Auditor {
  /// All state lives in one struct, so a packet costs one exclusivity check, not one per field.
  private var core: AuditorCore

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

  /// Judges one packet. `timestamp` is nanoseconds since the Unix epoch; `wireLength` the
  /// packet's original length; `frame` its captured bytes (valid only during the call).
  @discardableResult
  public func consume(timestamp: Int64, wireLength: Int, frame: UnsafeRawBufferPointer)
    -> PacketDisposition
  {
    var packet = core.decoder.decode(frame)
    return core.consume(timestamp: timestamp, wireLength: wireLength, frame: frame, packet: &packet)
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

  private struct LeakKey: Hashable {
    var leakClass: LeakClass
    var proto: UInt8
    var destination: Endpoint
  }

  private struct LeakState {
    var key: LeakKey
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
    self.decoder = PacketDecoder(linkType: linkType)
    self.flows = FlowTable(capacity: policy.maximumFlows)
    statistics.linkType = linkType.name
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
    if packet.network == .undecodable { statistics.undecodablePackets += 1 }
    let payload = UnsafeRawBufferPointer(
      rebasing: frame[packet.payloadOffset..<(packet.payloadOffset + packet.payloadLength)])

    let isIP = packet.network == .ipv4 || packet.network == .ipv6
    var flowIndex: Int?
    var disposition: PacketDisposition
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
      // Allowance is a property of the endpoints, so an allowed TCP or UDP flow stays allowed:
      // its later packets skip the policy (the hot path of bulk Tor traffic).
      let ported = packet.hasPorts && (key.proto == IPProtocolNumber.tcp || key.proto == 17)
      if ported, let index = flowIndex, flows.flows[index].disposition == .allowed {
        disposition = .allowed
      } else {
        disposition = policy.judge(packet, payload: payload)
        if let index = flowIndex {
          // The flow remembers its worst judgement; packets the reverse of a leak stay replies.
          let existing = flows.flows[index].disposition
          if case .leakReply(let leakClass) = existing, case .leak = disposition {
            disposition = .leakReply(leakClass)
          } else if case .leak = disposition, existing != disposition {
            flows.update(index) { $0.disposition = disposition }
          }
        } else {
          if case .leak(let leakClass) = disposition, let reverse = flows.find(key.reversed),
            case .leak = flows.flows[reverse].disposition
          {
            disposition = .leakReply(leakClass)
          }
          let state = FlowState(
            key: key, ipv6: packet.network == .ipv6, first: timestamp, last: timestamp,
            packets: 0, bytes: 0, disposition: disposition)
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
      disposition = policy.judge(packet, payload: payload)
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
      names = extractNames(packet, payload)
      recordLeak(leakClass, packet, timestamp, wireLength, names)
    case .leakReply(let leakClass):
      statistics.leakReplyPackets += 1
      names = extractNames(packet, payload)
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

  /// Names in clear: DNS questions on DNS ports, TLS SNI, HTTP Host. Only leaks pay for this.
  private func extractNames(_ packet: DecodedPacket, _ payload: UnsafeRawBufferPointer)
    -> [String]
  {
    guard packet.hasPorts, !packet.isLaterFragment, !payload.isEmpty else { return [] }
    let dnsPort =
      LeakClass.isDNSPort(packet.destinationPort) || LeakClass.isDNSPort(packet.sourcePort)
    let dnsPlain = dnsPort && packet.destinationPort != 853 && packet.sourcePort != 853
    if packet.ipProtocol == IPProtocolNumber.udp {
      return dnsPlain ? DNSQuestionParser.questionNames(payload) : []
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
    _ leakClass: LeakClass, _ packet: DecodedPacket, _ timestamp: Int64, _ length: Int,
    _ names: [String]
  ) {
    let key = LeakKey(
      leakClass: leakClass, proto: packet.network == .undecodable ? 255 : packet.ipProtocol,
      destination: leakDestination(packet))
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
        key: key, sources: [source], names: names, first: timestamp, last: timestamp, packets: 1,
        bytes: length, replies: 0))
  }

  private mutating func recordLeakReply(
    _ leakClass: LeakClass, _ packet: DecodedPacket, _ names: [String]
  ) {
    let key = LeakKey(
      leakClass: leakClass, proto: packet.ipProtocol,
      destination: Endpoint(address: packet.source, port: packet.hasPorts ? packet.sourcePort : 0))
    guard let index = leakIndex[key] else { return }
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
    stats.firstTime = firstTimestamp.map(Self.seconds)
    stats.lastTime = firstTimestamp == nil ? nil : Self.seconds(lastTimestamp)
    let leakRecords = leaks.map { leak in
      LeakRecord(
        leakClass: leak.key.leakClass,
        protocol: leak.key.proto == 255 ? "non-ip" : IPProtocolNumber.name(leak.key.proto),
        destination: leak.key.proto == 255
          ? "-"
          : (leak.key.proto == IPProtocolNumber.tcp || leak.key.proto == IPProtocolNumber.udp)
            ? leak.key.destination.description : leak.key.destination.address.description,
        sources: leak.sources.map(\.description), names: leak.names,
        firstTime: Self.seconds(leak.first), firstOffset: Self.seconds(leak.first - origin),
        lastTime: Self.seconds(leak.last), packets: leak.packets, bytes: leak.bytes,
        replyPackets: leak.replies)
    }.sorted { ($0.firstTime, $0.leakClass) < ($1.firstTime, $1.leakClass) }
    let flowRecords = flows.flows.map { flow in
      FlowRecord(
        protocol: IPProtocolNumber.name(flow.key.proto), source: flow.key.source.description,
        destination: flow.key.destination.description, sourcePort: flow.key.sourcePort,
        destinationPort: flow.key.destinationPort, firstTime: Self.seconds(flow.first),
        lastTime: Self.seconds(flow.last), packets: flow.packets, bytes: flow.bytes,
        disposition: flow.disposition.label, names: flow.names)
    }
    return AuditReport(
      verdict: verdict, reasons: reasons, allowed: policy.allowed.sorted().map(\.description),
      syncProbe: policy.syncProbe.map { "udp \($0.destination)" }, leaks: leakRecords,
      linkControl: linkControl, statistics: stats, capture: capture, flows: flowRecords)
  }

  private static func seconds(_ nanoseconds: Int64) -> Double {
    Double(nanoseconds) / 1e9
  }
}
