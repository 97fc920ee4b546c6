import Audit
import SyntheticTraffic
import Testing

@Suite struct DecoderTests {
  func decode(_ packet: [UInt8], _ linkType: LinkType = .raw) -> DecodedPacket {
    FrameBuilder.frame(linkType, ip: packet).withUnsafeBytes {
      PacketDecoder(linkType: linkType).decode($0)
    }
  }

  @Test func ipv6ExtensionHeadersAreWalkedToTheUpperLayer() {
    let udp = FrameBuilder.udp(sourcePort: 1234, destinationPort: 53, payload: [1, 2])
    let packet = FrameBuilder.ipv6(
      source: Fixtures.device6, destination: Fixtures.world6, proto: IPProtocolNumber.udp,
      payload: udp,
      extensions: [
        .hopByHop, .routing, .destinationOptions, .authentication,
        .fragment(offset: 0, more: true, id: 7),
      ])
    let decoded = decode(packet)
    #expect(decoded.network == .ipv6)
    #expect(decoded.ipProtocol == IPProtocolNumber.udp)
    #expect(decoded.hasPorts)
    #expect(decoded.destinationPort == 53)
    #expect(decoded.isFragment && !decoded.isLaterFragment)
    #expect(decoded.fragmentID == 7)
    #expect(decoded.payloadLength == 2)
  }

  @Test func laterFragmentsInheritTheFirstFragmentsPorts() {
    let udp = FrameBuilder.udp(sourcePort: 40000, destinationPort: 53, payload: [0, 0, 0, 0])
    let first = FrameBuilder.ipv4(
      source: Fixtures.device, destination: Fixtures.world, proto: IPProtocolNumber.udp,
      payload: udp, id: 99, moreFragments: true)
    let second = FrameBuilder.ipv4(
      source: Fixtures.device, destination: Fixtures.world, proto: IPProtocolNumber.udp,
      payload: [UInt8](repeating: 0, count: 16), id: 99, fragmentOffset: 16)
    #expect(decode(second).isLaterFragment)
    #expect(!decode(second).hasPorts)
    let report = Fixtures.audit([first, second])
    #expect(report.flows.count == 1)
    #expect(report.flows[0].packets == 2)
    #expect(report.flows[0].destinationPort == 53)
    #expect(report.leaks.map(\.leakClass) == [.dns])
    #expect(report.leaks[0].packets == 2)

    let first6 = FrameBuilder.ipv6(
      source: Fixtures.device6, destination: Fixtures.world6, proto: IPProtocolNumber.udp,
      payload: udp, extensions: [.fragment(offset: 0, more: true, id: 5)])
    let second6 = FrameBuilder.ipv6(
      source: Fixtures.device6, destination: Fixtures.world6, proto: IPProtocolNumber.udp,
      payload: [0, 0, 0, 0], extensions: [.fragment(offset: 16, more: false, id: 5)])
    let report6 = Fixtures.audit([first6, second6])
    #expect(report6.flows.count == 1)
    #expect(report6.leaks.first?.packets == 2)
  }

  @Test func aLaterFragmentOfAnAllowedFlowIsAllowed() {
    let tcp = FrameBuilder.tcp(sourcePort: 41000, destinationPort: 9001, payload: [1, 2, 3, 4])
    let first = FrameBuilder.ipv4(
      source: Fixtures.device, destination: Fixtures.guardEndpoint.address,
      proto: IPProtocolNumber.tcp, payload: tcp, id: 3, moreFragments: true)
    let second = FrameBuilder.ipv4(
      source: Fixtures.device, destination: Fixtures.guardEndpoint.address,
      proto: IPProtocolNumber.tcp, payload: [1, 2, 3, 4, 5, 6, 7, 8], id: 3, fragmentOffset: 24)
    // The guard as a plain TCP endpoint: fragments of a Tor endpoint's flow cannot be checked
    // for content (ContentTests holds that they are inconclusive).
    var policy = Fixtures.policy
    policy.allowed.insert(Fixtures.guardEndpoint, as: .tcp)
    #expect(Fixtures.audit([first, second], policy: policy).verdict == .pass)
  }

  @Test func ethernetPaddingDoesNotCountAsPayload() {
    let packet = FrameBuilder.udpPacket(
      from: Fixtures.endpoint(Fixtures.device, 1), to: Fixtures.endpoint(Fixtures.world, 2),
      payload: [9])
    let padded = FrameBuilder.frame(.ethernet, ip: packet) + [UInt8](repeating: 0, count: 20)
    let decoded = padded.withUnsafeBytes { PacketDecoder(linkType: .ethernet).decode($0) }
    #expect(decoded.payloadLength == 1)
  }

  @Test func dnsNamesAreReadWithCompressionAndBounds() {
    // Two questions, the second compressed against the first.
    var message = FrameBuilder.dnsQuery(name: "a.example.org")
    message[5] = 2
    message += [1, 0x62, 0xC0, 14] + FrameBuilder.be16(1) + FrameBuilder.be16(1)
    let names = message.withUnsafeBytes { DNSQuestionParser.questionNames($0) }
    #expect(names == ["a.example.org", "b.example.org"])
    // A pointer loop ends without a name.
    let loop: [UInt8] = [0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xC0, 12]
    #expect(loop.withUnsafeBytes { DNSQuestionParser.questionNames($0) } == [])
  }

  /// Cutting any frame at any length must never trap, and must never turn a leak into a pass
  /// once the IP header is whole.
  @Test(arguments: CanaryTests.linkTypes)
  func truncatedFramesNeverCrash(linkType: LinkType) {
    let packets = Fixtures.canaries.map(\.2) + Fixtures.torFlow + Fixtures.linkControl.map(\.2)
    let auditor = Auditor(linkType: linkType, policy: Fixtures.policy)
    var judged = 0
    for packet in packets {
      let frame = FrameBuilder.frame(linkType, ip: packet)
      for length in 0...frame.count {
        let cut = Array(frame.prefix(length))
        cut.withUnsafeBytes {
          _ = auditor.consume(timestamp: 1, wireLength: frame.count, frame: $0)
        }
        judged += 1
      }
    }
    #expect(auditor.packetCount == judged)
    #expect(auditor.report().verdict == .leak)
  }

  /// Random bytes behind valid-looking headers of every link type never trap (a seeded
  /// generator, so a failure reproduces).
  @Test(arguments: CanaryTests.linkTypes)
  func randomFramesNeverCrash(linkType: LinkType) {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(linkType.rawValue)
    func next() -> UInt64 {
      state ^= state << 13
      state ^= state >> 7
      state ^= state << 17
      return state
    }
    let auditor = Auditor(linkType: linkType, policy: Fixtures.policy)
    let seeds = Fixtures.canaries.map(\.2) + Fixtures.torFlow
    for round in 0..<5000 {
      var frame = FrameBuilder.frame(linkType, ip: seeds[round % seeds.count])
      // Flip a few bytes anywhere (headers included), then cut at a random length.
      for _ in 0..<(1 + Int(next() % 4)) {
        frame[Int(next() % UInt64(frame.count))] = UInt8(truncatingIfNeeded: next())
      }
      let cut = Array(frame.prefix(Int(next() % UInt64(frame.count + 1))))
      cut.withUnsafeBytes {
        _ = auditor.consume(timestamp: Int64(round), wireLength: 1500, frame: $0)
      }
    }
    #expect(auditor.packetCount == 5000)
  }
}
