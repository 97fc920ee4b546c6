/// pass: nothing left the device outside the policy and the capture is trustworthy.
/// leak: at least one packet broke the policy (a leak proven stays a leak even if the capture
/// also dropped packets). inconclusive: no leak seen, but the capture cannot vouch for it.
public enum Verdict: String, Sendable, Codable {
  case pass
  case leak
  case inconclusive

  /// Whonix's convention: 0 pass, 5 leak, 2 inconclusive.
  public var exitCode: Int32 {
    switch self {
    case .pass: return 0
    case .leak: return 5
    case .inconclusive: return 2
    }
  }
}

/// Why a capture cannot vouch for a pass.
public struct InconclusiveReason: Sendable, Codable, Hashable, CustomStringConvertible {
  public enum Kind: String, Sendable, Codable {
    case drops
    case captureStartedLate = "capture-started-late"
    case positiveControlMissing = "positive-control-missing"
    case unreadableFile = "unreadable-file"
    case noPackets = "no-packets"
    case directionUnknown = "direction-unknown"
    case captureError = "capture-error"
    /// A flow to a Tor endpoint whose bytes the capture cannot show from the start (no SYN,
    /// a gap, a start cut short): its content is unchecked.
    case contentUnverified = "content-unverified"
  }

  public var kind: Kind
  public var detail: String

  public init(_ kind: Kind, _ detail: String) {
    self.kind = kind
    self.detail = detail
  }

  public var description: String { "\(kind.rawValue): \(detail)" }
}

/// Leaks grouped by (class, protocol, destination).
public struct LeakRecord: Sendable, Codable, Hashable {
  public var leakClass: LeakClass
  public var `protocol`: String
  public var destination: String
  /// Sources seen sending to it (at most a few).
  public var sources: [String]
  /// DNS question names, TLS SNI and HTTP Host values seen in these packets.
  public var names: [String]
  /// Why these packets are a leak (``LeakReason``), which way they went, what the first one
  /// showed beyond its addresses (a forged source, the flow an ICMP error quotes, IP
  /// options), and the first bytes it carried (hex).
  public var reason: String?
  public var direction: String?
  public var evidence: String?
  public var sample: String?
  /// Seconds since the Unix epoch, and since the capture's first packet.
  public var firstTime: Double
  public var firstOffset: Double
  public var lastTime: Double
  public var packets: Int
  public var bytes: Int
  /// Packets in the reverse direction of these leaks (answers, acks).
  public var replyPackets: Int

  enum CodingKeys: String, CodingKey {
    case leakClass = "class"
    case `protocol`, destination, sources, names, reason, direction, evidence, sample, firstTime
    case firstOffset, lastTime, packets, bytes, replyPackets
  }
}

public struct FlowRecord: Sendable, Codable, Hashable {
  public var `protocol`: String
  public var source: String
  public var destination: String
  public var sourcePort: UInt16
  public var destinationPort: UInt16
  public var firstTime: Double
  public var lastTime: Double
  public var packets: Int
  public var bytes: Int
  /// allowed, control, link-control:KIND, inbound, undecided, leak:CLASS, leak-reply:CLASS.
  public var disposition: String
  public var names: [String]
}

public struct LinkControlSummary: Sendable, Codable, Hashable {
  public var arp = 0
  public var neighbourDiscovery = 0
  public var mld = 0
  public var igmp = 0

  public init() {}

  public var total: Int { arp + neighbourDiscovery + mld + igmp }
}

/// libpcap's counters for a live capture (pcap_stats).
public struct CaptureStatistics: Sendable, Codable, Hashable {
  public var received: UInt64
  public var dropped: UInt64
  public var interfaceDropped: UInt64

  public init(received: UInt64, dropped: UInt64, interfaceDropped: UInt64) {
    self.received = received
    self.dropped = dropped
    self.interfaceDropped = interfaceDropped
  }
}

public struct AuditStatistics: Sendable, Codable, Hashable {
  public var linkType: String = ""
  public var packets = 0
  public var bytes = 0
  public var allowedPackets = 0
  public var controlPackets = 0
  public var linkControlPackets = 0
  public var inboundPackets = 0
  /// Packets from an allowed endpoint whose direction nothing in the capture gave.
  public var undecidedPackets = 0
  public var leakPackets = 0
  public var leakReplyPackets = 0
  /// Frames whose headers could not be decoded (counted as other-protocol leaks).
  public var undecodablePackets = 0
  /// Packets of flows beyond the flow cap (judged and counted, not kept as flows).
  public var flowOverflowPackets = 0
  public var leakGroupOverflowPackets = 0
  /// Flows to a Tor endpoint whose content the capture could not show from the start.
  public var unverifiedFlows = 0
  public var firstTime: Double?
  public var lastTime: Double?

  public init() {}
}

/// The audit's result, the source of truth for every other report format.
public struct AuditReport: Sendable, Codable {
  public var verdict: Verdict
  public var reasons: [InconclusiveReason]
  public var allowed: [String]
  public var syncProbe: String?
  public var leaks: [LeakRecord]
  public var linkControl: LinkControlSummary
  public var statistics: AuditStatistics
  public var capture: CaptureStatistics?
  public var flows: [FlowRecord]

  public init(
    verdict: Verdict, reasons: [InconclusiveReason], allowed: [String] = [],
    syncProbe: String? = nil, leaks: [LeakRecord] = [],
    linkControl: LinkControlSummary = LinkControlSummary(),
    statistics: AuditStatistics = AuditStatistics(), capture: CaptureStatistics? = nil,
    flows: [FlowRecord] = []
  ) {
    self.verdict = verdict
    self.reasons = reasons
    self.allowed = allowed
    self.syncProbe = syncProbe
    self.leaks = leaks
    self.linkControl = linkControl
    self.statistics = statistics
    self.capture = capture
    self.flows = flows
  }

  /// A report for a run that could not audit anything (never a pass).
  public static func inconclusive(_ reason: InconclusiveReason) -> AuditReport {
    AuditReport(verdict: .inconclusive, reasons: [reason])
  }
}
