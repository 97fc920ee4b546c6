import Audit
import SyntheticTraffic
import Testing

/// Issue 28: a Tor endpoint carries only Tor, and padding carries nothing. Each endpoint role
/// with its canaries (must be caught, with the class and reason) and its clean controls
/// (must pass), as raw frames on every link type the audit reads.
@Suite struct TorEndpointTests {
  static let client = Fixtures.endpoint(Fixtures.device, 41000)
  static let dirPort = Fixtures.endpoint(IPAddress("10.66.1.11")!, 9030)
  static let bridge = Fixtures.endpoint(IPAddress("10.66.1.12")!, 4433)
  static let mockGuard = Fixtures.endpoint(IPAddress("10.66.1.13")!, 9001)

  static var policy: AuditPolicy {
    var policy = Fixtures.policy
    policy.allowed.insert(dirPort, as: .dirPort)
    policy.allowed.insert(bridge, as: .obfs4)
    policy.allowed.insert(mockGuard, as: .mockGuard)
    return policy
  }

  /// A connection from the device: SYN at sequence 100, then each payload in sequence.
  static func connection(to endpoint: Endpoint, _ payloads: [[UInt8]], port: UInt16 = 41000)
    -> [[UInt8]]
  {
    let from = Fixtures.endpoint(Fixtures.device, port)
    var packets = [FrameBuilder.tcpPacket(from: from, to: endpoint, flags: 0x02, sequence: 100)]
    packets.append(FrameBuilder.tcpPacket(from: endpoint, to: from, flags: 0x12))
    var sequence: UInt32 = 101
    for payload in payloads {
      packets.append(
        FrameBuilder.tcpPacket(from: from, to: endpoint, sequence: sequence, payload: payload))
      sequence &+= UInt32(payload.count)
    }
    return packets
  }

  static func audit(_ packets: [[UInt8]], linkType: LinkType = .linuxSLL2) -> AuditReport {
    Fixtures.audit(packets, linkType: linkType, policy: policy)
  }

  static let clearRequest = Array(
    "GET http://clear.example/secret HTTP/1.1\r\nHost: clear.example\r\n\r\n".utf8)
  static let linkTypes: [LinkType] = [.ethernet, .linuxSLL, .linuxSLL2, .raw]

  static func random(_ count: Int, seed: UInt64) -> [UInt8] {
    var state = seed | 1
    return (0..<count).map { _ in
      state ^= state << 13
      state ^= state >> 7
      state ^= state << 17
      return UInt8(truncatingIfNeeded: state)
    }
  }

  // MARK: transport

  @Test(arguments: linkTypes)
  func udpToTheGuardsORPortIsALeakWhateverItCarries(linkType: LinkType) {
    let query = FrameBuilder.udpPacket(
      from: Self.client, to: Fixtures.guardEndpoint,
      payload: FrameBuilder.dnsQuery(name: "secret.example"))
    let report = Self.audit(Fixtures.torFlow + [query], linkType: linkType)
    #expect(report.verdict == .leak, "\(AuditSummary.text(report))")
    let leak = report.leaks.first
    #expect(report.leaks.count == 1)
    #expect(leak?.leakClass == .dns)
    #expect(leak?.reason == "protocol-not-allowed")
    #expect(leak?.destination == "10.66.1.10:9001")
    #expect(leak?.names == ["secret.example"])
    #expect(leak?.evidence?.contains("speaks tcp only") == true, "\(leak?.evidence ?? "")")
  }

  @Test func icmpEchoToAnAllowedAddressIsALeak() {
    let echo = FrameBuilder.ip(
      source: Fixtures.device, destination: Fixtures.guardEndpoint.address,
      proto: IPProtocolNumber.icmp, payload: FrameBuilder.icmp(type: 8))
    let report = Self.audit([echo])
    #expect(report.leaks.map(\.reason) == ["protocol-not-allowed"])
    #expect(report.leaks.first?.leakClass == .icmp)
  }

  @Test func udpToAUserNamedUDPEndpointIsAllowed() {
    var policy = Self.policy
    let endpoint = Fixtures.endpoint(IPAddress("10.66.1.30")!, 3478)
    policy.allowed.insert(endpoint, as: .udp)
    let packet = FrameBuilder.udpPacket(from: Self.client, to: endpoint, payload: [1, 2, 3])
    #expect(Fixtures.audit([packet], linkType: .linuxSLL2, policy: policy).verdict == .pass)
    // The same endpoint does not allow TCP.
    let syn = FrameBuilder.tcpPacket(from: Self.client, to: endpoint, flags: 0x02)
    let report = Fixtures.audit([syn], linkType: .linuxSLL2, policy: policy)
    #expect(report.leaks.map(\.reason) == ["protocol-not-allowed"])
  }

  // MARK: ORPort

  @Test(arguments: linkTypes)
  func clearHTTPStraightToTheORPortIsALeakWithItsFirstBytes(linkType: LinkType) {
    let report = Self.audit(
      Self.connection(to: Fixtures.guardEndpoint, [Self.clearRequest]), linkType: linkType)
    #expect(report.verdict == .leak)
    let leak = report.leaks.first
    #expect(leak?.leakClass == .clearOnTorEndpoint)
    #expect(leak?.reason == "content-not-allowed")
    #expect(leak?.names == ["clear.example"])
    let evidence = leak?.evidence ?? ""
    #expect(evidence.contains("GET http://clear.example/secret"), "\(evidence)")
    #expect(evidence.contains("stream byte 0"), "\(evidence)")
    #expect(evidence.contains("an HTTP request line"), "\(evidence)")
    #expect(evidence.contains("TLS handshake record"), "\(evidence)")
    #expect(leak?.sample?.hasPrefix("474554") == true)  // "GET"
  }

  @Test func clearBytesAfterAGenuineHandshakeAreALeakAtTheirOffset() {
    let hello = FrameBuilder.tlsClientHello(serverName: "www.abcdef.com")
    let record: [UInt8] = [0x17, 3, 3, 0, 4, 1, 2, 3, 4]
    let report = Self.audit(
      Self.connection(to: Fixtures.guardEndpoint, [hello, record, Self.clearRequest]))
    #expect(report.leaks.map(\.leakClass) == [.clearOnTorEndpoint])
    #expect(
      report.leaks.first?.evidence?.contains("stream byte \(hello.count + record.count)") == true,
      "\(report.leaks.first?.evidence ?? "")")
    // Every later packet the device sends on that flow counts with the leak.
    #expect(
      report.flows.first { $0.destinationPort == 9001 }?.disposition == "leak:clear-on-tor-endpoint"
    )
  }

  @Test func aTLSRecordThatIsNotAClientHelloFirstIsALeak() {
    let report = Self.audit(
      Self.connection(to: Fixtures.guardEndpoint, [[0x17, 3, 3, 0, 4, 1, 2, 3, 4]]))
    #expect(report.leaks.map(\.leakClass) == [.clearOnTorEndpoint])
    let serverHelloFirst = Self.audit(
      Self.connection(to: Fixtures.guardEndpoint, [[0x16, 3, 1, 0, 4, 2, 0, 0, 0]]))
    #expect(serverHelloFirst.leaks.first?.evidence?.contains("ClientHello") == true)
  }

  @Test func tlsSplitAnywhereAcrossSegmentsAndRetransmittedPasses() {
    let hello = FrameBuilder.tlsClientHello(serverName: "www.abcdef.com")
    let cells = [UInt8]([0x17, 3, 3, 0x02, 0x1A]) + [UInt8](repeating: 0x5A, count: 538)
    let stream = hello + cells + cells
    // Cut into segments of 1, 2, 3... bytes so every header boundary falls inside one.
    var segments: [[UInt8]] = []
    var index = 0
    var size = 1
    while index < stream.count {
      segments.append(Array(stream[index..<min(stream.count, index + size)]))
      index += size
      size = size % 7 + 1
    }
    var packets = Self.connection(to: Fixtures.guardEndpoint, segments)
    // A retransmission of the third segment and one overlapping the fourth.
    packets.append(packets[4])
    let report = Self.audit(packets)
    #expect(report.verdict == .pass, "\(AuditSummary.text(report))")
    let overlapping = FrameBuilder.tcpPacket(
      from: Self.client, to: Fixtures.guardEndpoint, sequence: 101,
      payload: Array(stream.prefix(40)))
    #expect(
      Self.audit(
        Self.connection(to: Fixtures.guardEndpoint, [Array(stream.prefix(20))]) + [overlapping]
      ).verdict == .pass)
  }

  @Test func aFlowWhoseStartTheCaptureMissedIsInconclusiveNeverAPass() {
    let midStream = FrameBuilder.tcpPacket(
      from: Self.client, to: Fixtures.guardEndpoint, sequence: 5000,
      payload: [0x17, 3, 3, 0, 2, 1, 2])
    let report = Self.audit([midStream])
    #expect(report.verdict == .inconclusive, "\(AuditSummary.text(report))")
    #expect(report.reasons.map(\.kind) == [.contentUnverified])
    #expect(report.reasons.first?.detail.contains("no SYN") == true)
    #expect(report.statistics.unverifiedFlows == 1)
    // A gap in the device's bytes: the same.
    let hello = FrameBuilder.tlsClientHello(serverName: "www.abcdef.com")
    var packets = Self.connection(to: Fixtures.guardEndpoint, [hello])
    packets.append(
      FrameBuilder.tcpPacket(
        from: Self.client, to: Fixtures.guardEndpoint, sequence: 101 + UInt32(hello.count) + 10,
        payload: Self.clearRequest))
    let gap = Self.audit(packets)
    #expect(gap.verdict == .inconclusive)
    #expect(gap.reasons.first?.detail.contains("missing from the capture") == true)
    // A fragmented segment to an ORPort is not followed either.
    let tcp = FrameBuilder.tcp(
      sourcePort: 41000, destinationPort: 9001, sequence: 101, payload: hello)
    let fragment = FrameBuilder.ipv4(
      source: Fixtures.device, destination: Fixtures.guardEndpoint.address,
      proto: IPProtocolNumber.tcp, payload: Array(tcp.prefix(48)), id: 9, moreFragments: true)
    let fragmented = Self.audit(
      Array(Self.connection(to: Fixtures.guardEndpoint, []).prefix(2)) + [fragment])
    #expect(fragmented.verdict == .inconclusive)
    // A SYN and acks without data leave nothing to check: a pass.
    let blocked = Self.audit([
      FrameBuilder.tcpPacket(from: Self.client, to: Fixtures.guardEndpoint, flags: 0x02)
    ])
    #expect(blocked.verdict == .pass)
  }

  /// Segments the capture cut at its snap length (GSO hands a capture segments of up to
  /// 64 KiB): bytes inside a TLS record's body are skipped; a record header in the cut part
  /// leaves the flow unverified, never passed.
  @Test func bytesTheSnapLengthCutAreSkippedInsideARecordOnly() {
    let hello = FrameBuilder.tlsClientHello(serverName: "www.abcdef.com")
    let big = [UInt8]([0x17, 3, 3, 0x10, 0x00]) + [UInt8](repeating: 0x5A, count: 4096)
    func audit(_ second: [UInt8], cut: Int) -> AuditReport {
      let packets = Self.connection(to: Fixtures.guardEndpoint, [hello, second])
      let auditor = Auditor(linkType: .linuxSLL2, policy: Self.policy)
      for (index, packet) in packets.enumerated() {
        var frame = FrameBuilder.frame(
          .linuxSLL2, ip: packet, outbound: Fixtures.sentByDevice(packet))
        if index == packets.count - 1 { frame = Array(frame.prefix(cut)) }
        _ = frame.withUnsafeBytes {
          auditor.consume(timestamp: Int64(index) * 1000, wireLength: packet.count + 20, frame: $0)
        }
      }
      return auditor.report()
    }
    #expect(audit(big, cut: 2048).verdict == .pass)
    // Two records: the second's header lies past the cut.
    let two =
      [UInt8]([0x17, 3, 3, 0x03, 0xE8]) + [UInt8](repeating: 0x5A, count: 1000)
      + [0x17, 3, 3, 0, 3, 1, 2, 3]
    let report = audit(two, cut: 512)
    #expect(report.verdict == .inconclusive, "\(AuditSummary.text(report))")
    #expect(report.reasons.first?.detail.contains("snap length") == true)
  }

  @Test func aNewSYNOnTheSamePortsStartsTheCheckAgain() {
    let hello = FrameBuilder.tlsClientHello(serverName: "www.abcdef.com")
    var packets = Self.connection(to: Fixtures.guardEndpoint, [hello])
    packets += Self.connection(to: Fixtures.guardEndpoint, [Self.clearRequest])
    #expect(Self.audit(packets).leaks.map(\.leakClass) == [.clearOnTorEndpoint])
  }

  // MARK: DirPort, obfs4, the mock's guard

  @Test func aDirPortTakesOnlyDirectoryRequests() {
    let consensus = Array("GET /tor/status-vote/current/consensus HTTP/1.0\r\n\r\n".utf8)
    let publish = Array("POST /tor/ HTTP/1.0\r\nContent-Length: 3\r\n\r\nabc".utf8)
    #expect(Self.audit(Self.connection(to: Self.dirPort, [consensus])).verdict == .pass)
    #expect(
      Self.audit(
        Self.connection(to: Self.dirPort, [Array(consensus[0..<3]), Array(consensus[3...])])
      ).verdict == .pass)
    #expect(Self.audit(Self.connection(to: Self.dirPort, [publish])).verdict == .pass)
    let other = Self.audit(Self.connection(to: Self.dirPort, [Self.clearRequest]))
    #expect(other.leaks.map(\.leakClass) == [.clearOnTorEndpoint])
    let page = Self.audit(
      Self.connection(to: Self.dirPort, [Array("GET /index.html HTTP/1.0\r\n\r\n".utf8)]))
    #expect(page.leaks.first?.evidence?.contains("/tor/") == true)
    // A request line cut short at the capture's end is unverified.
    #expect(
      Self.audit(Self.connection(to: Self.dirPort, [Array("GET /t".utf8)])).verdict == .inconclusive
    )
  }

  static let obfs4Canaries: [(String, [UInt8])] = [
    ("an HTTP request line", clearRequest),
    ("a TLS ClientHello", FrameBuilder.tlsClientHello(serverName: "bridge.example")),
    (
      "a DNS query (over TCP)",
      FrameBuilder.be16(UInt16(FrameBuilder.dnsQuery(name: "x.example").count))
        + FrameBuilder.dnsQuery(name: "x.example")
    ),
    ("a SOCKS5 greeting", [5, 1, 0]),
    ("a line of text", Array("SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n".utf8)),
  ]

  @Test(arguments: obfs4Canaries.indices)
  func anObfs4BridgeTakesNoRecognisableClearProtocol(index: Int) {
    let (name, bytes) = Self.obfs4Canaries[index]
    var packets = Self.connection(to: Self.bridge, [bytes])
    packets.append(
      FrameBuilder.tcpPacket(
        from: Self.client, to: Self.bridge, flags: 0x11, sequence: 101 + UInt32(bytes.count)))
    let report = Self.audit(packets)
    #expect(report.leaks.map(\.leakClass) == [.clearOnTorEndpoint], "\(name)")
    #expect(
      report.leaks.first?.evidence?.contains(name) == true, "\(report.leaks.first?.evidence ?? "")")
  }

  @Test func randomLookingObfs4BytesPass() {
    // Many handshakes of random bytes (obfs4's is at least 149), the first cut at 7 bytes.
    var packets: [[UInt8]] = []
    for seed in 1...200 {
      let bytes = Self.random(149 + seed, seed: UInt64(seed))
      packets += Self.connection(
        to: Self.bridge, [Array(bytes.prefix(7)), Array(bytes.dropFirst(7))],
        port: UInt16(42000 + seed))
    }
    let report = Self.audit(packets)
    #expect(report.verdict == .pass, "\(AuditSummary.text(report))")
  }

  @Test func theMockGuardTakesOnlyTheMockTorsTunnelRequest() {
    let request = Array("FCT1".utf8) + [13] + Array("clear.example".utf8) + [0, 80]
    #expect(
      Self.audit(Self.connection(to: Self.mockGuard, [request, Self.clearRequest])).verdict == .pass
    )
    let clear = Self.audit(Self.connection(to: Self.mockGuard, [Self.clearRequest]))
    #expect(clear.leaks.map(\.leakClass) == [.clearOnTorEndpoint])
    let badHost = Array("FCT1".utf8) + [4] + Array("a b\n".utf8) + [0, 80]
    #expect(Self.audit(Self.connection(to: Self.mockGuard, [badHost])).leaks.count == 1)
  }

  @Test func rolesParseFromTheirNames() {
    #expect(AllowedEndpoints.parse("10.0.0.5:9001")?.1 == .orPort)
    #expect(AllowedEndpoints.parse("obfs4:[fd00::5]:443")?.0 == Endpoint("[fd00::5]:443"))
    #expect(AllowedEndpoints.parse("obfs4:[fd00::5]:443")?.1 == .obfs4)
    #expect(AllowedEndpoints.parse("dirport:10.0.0.5:9030")?.1 == .dirPort)
    #expect(AllowedEndpoints.parse("bogus:10.0.0.5:9030") == nil)
    #expect(AllowedEndpoints.parse("udp:10.0.0.5") == nil)
    let allowed: AllowedEndpoints = [
      (Endpoint("10.0.0.5:9001")!, .orPort), (Endpoint("10.0.0.6:1")!, .udp),
    ]
    #expect(allowed.descriptions == ["orport:10.0.0.5:9001", "udp:10.0.0.6:1"])
  }
}
