import Audit
import SyntheticTraffic
import Testing

/// Issue 11: each way a root program in the device could make the audit pass a leak, as a
/// canary that must be caught, next to the clean control that must still pass. Frames carry
/// their direction as the sandbox's cooked capture does (SLL2) unless a test says otherwise.
@Suite struct EvasionTests {
  static let sll2: LinkType = .linuxSLL2
  static let guard6 = Endpoint("[fd66:0:0:1::10]:9001")!
  static var policy: AuditPolicy {
    var policy = Fixtures.policy
    policy.allowed.insert(guard6, as: .orPort)
    return policy
  }

  static func audit(_ packets: [[UInt8]], linkType: LinkType = sll2, outbound: [Bool]? = nil)
    -> AuditReport
  {
    Fixtures.audit(packets, linkType: linkType, policy: policy, outbound: outbound)
  }

  static let forgedDNS = FrameBuilder.udpPacket(
    from: Fixtures.guardEndpoint, to: Fixtures.endpoint(Fixtures.world, 53),
    payload: FrameBuilder.dnsQuery(name: "forged.example"))

  // MARK: direction and forged sources

  @Test(arguments: [LinkType.linuxSLL2, .linuxSLL, .ethernet, .raw])
  func aPacketLeavingWithTheGuardAsItsSourceIsALeak(linkType: LinkType) {
    let report = Self.audit(Fixtures.torFlow + [Self.forgedDNS], linkType: linkType)
    #expect(report.verdict == .leak)
    #expect(report.leaks.count == 1)
    let leak = report.leaks.first
    #expect(leak?.leakClass == .dns)
    #expect(leak?.reason == LeakReason.forgedSource.rawValue)
    #expect(leak?.direction == "outbound")
    #expect(leak?.sources == ["10.66.1.10:9001"])
    #expect(leak?.names == ["forged.example"])
    #expect(leak?.evidence?.contains("10.66.1.10:9001") == true)
    #expect(leak?.sample?.isEmpty == false)
    // The clean control on the same link type still passes.
    #expect(Self.audit(Fixtures.torFlow, linkType: linkType).verdict == .pass)
  }

  @Test func theReverseOfAnAllowedFlowSentByTheDeviceIsNotItsReply() {
    // The guard's reply key, but leaving the device: the flow table's fast path must not wave
    // it through.
    let forgedReply = FrameBuilder.tcpPacket(
      from: Fixtures.guardEndpoint, to: Fixtures.endpoint(Fixtures.device, 41000),
      payload: Array("exfiltrated".utf8))
    let report = Self.audit(
      Fixtures.torFlow + [forgedReply], outbound: [true, false, true, false, true])
    #expect(report.verdict == .leak)
    #expect(report.leaks.map(\.reason) == [LeakReason.forgedSource.rawValue])
    let carried = "exfiltrated".utf8.map { String($0, radix: 16) }.joined()
    #expect(report.leaks.first?.sample == carried)
  }

  @Test func arrivingPacketsAreNeverLeaksButRepliesOfLeaksAreCountedWithThem() {
    let answer = FrameBuilder.udpPacket(
      from: Fixtures.endpoint(Fixtures.world, 53), to: Fixtures.endpoint(Fixtures.device, 40000),
      payload: FrameBuilder.dnsQuery(name: "leak.example"))
    let unsolicited = FrameBuilder.udpPacket(
      from: Fixtures.endpoint(Fixtures.world, 53), to: Fixtures.endpoint(Fixtures.device, 40999),
      payload: [1])
    let report = Self.audit([Fixtures.canaries[0].2, answer, unsolicited])
    #expect(report.statistics.leakPackets == 1)
    #expect(report.statistics.leakReplyPackets == 1)
    #expect(report.statistics.inboundPackets == 1)
    #expect(report.leaks.first?.replyPackets == 1)
  }

  @Test func withoutAnyDirectionAPacketFromTheGuardIsUndecidedNeverAPass() {
    let report = Fixtures.audit(
      Fixtures.torFlow + [Self.forgedDNS], linkType: .raw, policy: Fixtures.bare)
    #expect(report.verdict == .inconclusive)
    #expect(report.statistics.undecidedPackets == 3)
    #expect(report.reasons.map(\.kind) == [.directionUnknown])
    // Given the device's addresses, the same file is decided: the replies pass, the forged
    // packet (neither from nor to the device) is a leak.
    var withDevice = Fixtures.bare
    withDevice.deviceAddresses = [Fixtures.device]
    let decided = Fixtures.audit(
      Fixtures.torFlow + [Self.forgedDNS], linkType: .raw, policy: withDevice)
    #expect(decided.verdict == .leak)
    #expect(decided.leaks.map(\.reason) == [LeakReason.forgedSource.rawValue])
  }

  // MARK: ICMP errors

  /// What the guard sent the device, which an error from the device may quote.
  static let fromGuard = FrameBuilder.tcpPacket(
    from: Fixtures.guardEndpoint, to: Fixtures.endpoint(Fixtures.device, 41000), flags: 0x12)

  @Test func anErrorTowardsTheQuotedAllowedEndpointPasses() {
    let error = FrameBuilder.icmpError(
      from: Fixtures.device, to: Fixtures.guardEndpoint.address, quoting: Self.fromGuard)
    let report = Self.audit([error])
    #expect(report.verdict == .pass, "\(AuditSummary.text(report))")
    #expect(report.statistics.allowedPackets == 1)
  }

  @Test func anErrorQuotingAnAllowedFlowSentElsewhereIsALeak() {
    // The probe: an unreachable that quotes the guard's flow, addressed to a world
    // host, carrying two hundred bytes of anything.
    let error = FrameBuilder.icmpError(
      from: Fixtures.device, to: Fixtures.world, quoting: Self.fromGuard,
      extra: [UInt8](repeating: 0x41, count: 200))
    let report = Self.audit([error])
    #expect(report.verdict == .leak)
    #expect(report.leaks.first?.leakClass == .icmp)
    let reason = report.leaks.first?.reason
    #expect(
      reason == LeakReason.icmpQuoteInconsistent.rawValue
        || reason == LeakReason.icmpErrorMisdirected.rawValue)
    #expect(report.leaks.first?.evidence?.contains("10.66.1.10:9001") == true)
    // Without the padding it is still sent to the wrong host.
    let misdirected = FrameBuilder.icmpError(
      from: Fixtures.device, to: Fixtures.world, quoting: Self.fromGuard)
    #expect(Self.audit([misdirected]).leaks.map(\.reason) == ["icmp-error-misdirected"])
  }

  @Test func anErrorCarryingMoreThanItsQuoteOrMoreThanAnErrorMayIsALeak() {
    let padded = FrameBuilder.icmpError(
      from: Fixtures.device, to: Fixtures.guardEndpoint.address, quoting: Self.fromGuard,
      extra: [UInt8](repeating: 0x42, count: 100))
    #expect(Self.audit([padded]).leaks.map(\.reason) == ["icmp-quote-inconsistent"])
    let bigQuote = FrameBuilder.tcpPacket(
      from: Fixtures.guardEndpoint, to: Fixtures.endpoint(Fixtures.device, 41000),
      payload: [UInt8](repeating: 0x43, count: 700))
    let oversized = FrameBuilder.icmpError(
      from: Fixtures.device, to: Fixtures.guardEndpoint.address, quoting: bigQuote)
    #expect(Self.audit([oversized]).leaks.map(\.reason) == ["icmp-error-oversized"])
  }

  @Test func anErrorQuotingAFlowThatIsNotAllowedIsALeak() {
    let fromWorld = FrameBuilder.udpPacket(
      from: Fixtures.endpoint(Fixtures.world, 4444), to: Fixtures.endpoint(Fixtures.device, 1),
      payload: [1])
    let error = FrameBuilder.icmpError(
      from: Fixtures.device, to: Fixtures.world, quoting: fromWorld)
    let report = Self.audit([error])
    #expect(report.verdict == .leak)
    #expect(report.leaks.map(\.leakClass) == [.icmp])
  }

  @Test func anArrivingErrorAboutTheDevicesGuardFlowIsAllowed() {
    let toGuard = FrameBuilder.tcpPacket(
      from: Fixtures.endpoint(Fixtures.device, 41000), to: Fixtures.guardEndpoint, flags: 0x02)
    let error = FrameBuilder.icmpError(
      from: IPAddress("10.66.0.1")!, to: Fixtures.device, quoting: Array(toGuard.prefix(28)))
    let report = Self.audit([toGuard, error])
    #expect(report.verdict == .pass)
    #expect(report.statistics.allowedPackets == 2)
  }

  // MARK: link control

  static func linkControlReport(_ packet: [UInt8], etherType: UInt16? = nil) -> AuditReport {
    Fixtures.audit([packet], linkType: sll2, policy: policy, etherType: etherType)
  }

  @Test func wellFormedLinkControlPassesOnACookedCapture() {
    for (name, _, packet, etherType) in Fixtures.linkControl {
      let report = Self.linkControlReport(packet, etherType: etherType)
      #expect(report.verdict == .pass, "\(name): \(AuditSummary.text(report))")
      #expect(report.linkControl.total == 1, "\(name)")
    }
  }

  @Test func arpThatCarriesDataOrNamesAnotherNetworkIsALeak() {
    let trailing =
      FrameBuilder.arp(sender: Fixtures.device, target: IPAddress("10.66.0.1")!)
      + Array("secret in the padding".utf8)
    let offLink = FrameBuilder.arp(sender: Fixtures.device, target: Fixtures.world)
    let otherMAC = FrameBuilder.arp(
      senderMAC: [0x02, 9, 9, 9, 9, 9], sender: Fixtures.device, target: IPAddress("10.66.0.1")!)
    #expect(
      Self.linkControlReport(trailing, etherType: 0x0806).leaks.map(\.reason) == [
        "malformed-link-control"
      ])
    #expect(
      Self.linkControlReport(offLink, etherType: 0x0806).leaks.map(\.reason) == [
        "link-control-off-link"
      ])
    #expect(
      Self.linkControlReport(otherMAC, etherType: 0x0806).leaks.map(\.reason) == [
        "malformed-link-control"
      ])
  }

  static func icmpv6(
    _ payload: [UInt8], source: IPAddress = IPAddress("fe80::2")!,
    destination: IPAddress = IPAddress("ff02::1:ff00:1")!, hopLimit: UInt8 = 255,
    extensions: [FrameBuilder.ExtensionHeader] = []
  ) -> [UInt8] {
    FrameBuilder.ipv6(
      source: source, destination: destination, proto: IPProtocolNumber.icmpv6, payload: payload,
      extensions: extensions, hopLimit: hopLimit)
  }

  @Test func neighbourDiscoveryThatCarriesDataOrLeavesTheLinkIsALeak() {
    let solicitation = FrameBuilder.neighbourSolicitation(target: IPAddress("fd66::1")!)
    #expect(Self.linkControlReport(Self.icmpv6(solicitation)).verdict == .pass)
    let withPayload = Self.icmpv6(solicitation + Array("exfiltrate".utf8))
    let unknownOption = Self.icmpv6(solicitation + [99, 1, 1, 2, 3, 4, 5, 6])
    let offLinkTarget = Self.icmpv6(
      FrameBuilder.neighbourSolicitation(target: IPAddress("fd66:0:0:1::20")!))
    let toWorld = Self.icmpv6(solicitation, destination: Fixtures.world6)
    let routed = Self.icmpv6(solicitation, hopLimit: 64)
    #expect(Self.linkControlReport(withPayload).leaks.map(\.reason) == ["malformed-link-control"])
    #expect(Self.linkControlReport(unknownOption).leaks.map(\.reason) == ["malformed-link-control"])
    #expect(Self.linkControlReport(offLinkTarget).leaks.map(\.reason) == ["link-control-off-link"])
    #expect(Self.linkControlReport(toWorld).leaks.map(\.reason) == ["link-control-off-link"])
    #expect(Self.linkControlReport(routed).leaks.map(\.reason) == ["malformed-link-control"])
  }

  @Test func mldForAGroupBeyondTheLinkOrWithSourcesIsALeak() {
    let report = { (groups: [IPAddress], extra: [UInt8]) in
      Self.linkControlReport(
        Self.icmpv6(
          FrameBuilder.mldv2Report(groups: groups) + extra, destination: IPAddress("ff02::16")!,
          hopLimit: 1, extensions: [.hopByHop]))
    }
    #expect(report([IPAddress("ff02::1:ff00:2")!], []).verdict == .pass)
    let global = report([IPAddress("ff0e::1:2:3")!], [])
    #expect(global.leaks.map(\.reason) == ["link-control-off-link"])
    #expect(global.leaks.map(\.leakClass) == [.multicast])
    #expect(
      report([IPAddress("ff02::1")!], [1, 2, 3, 4]).leaks.map(\.reason) == [
        "malformed-link-control"
      ])
  }

  @Test func igmpJoiningARoutedGroupOrCarryingDataIsALeak() {
    let report = { (groups: [IPAddress], extra: [UInt8]) in
      Self.linkControlReport(
        FrameBuilder.ipv4(
          source: Fixtures.device, destination: IPAddress("224.0.0.22")!,
          proto: IPProtocolNumber.igmp, payload: FrameBuilder.igmpv3Report(groups: groups) + extra,
          ttl: 1))
    }
    #expect(report([IPAddress("224.0.0.251")!], []).verdict == .pass)
    #expect(report([IPAddress("239.1.2.3")!], []).leaks.map(\.reason) == ["link-control-off-link"])
    #expect(
      report([IPAddress("224.0.0.251")!], [9, 9, 9, 9]).leaks.map(\.reason) == [
        "malformed-link-control"
      ])
  }

  // MARK: the positive control

  @Test func onlyTheHarnesssOwnProbeIsControl() {
    var policy = Self.policy
    let payload = SyncProbe.payload(runPrefix: "fc-1a2b3c")
    policy.syncProbe = SyncProbe(destination: Endpoint("10.66.0.1:9")!, payload: payload)
    let probe = { (bytes: [UInt8]) in
      FrameBuilder.udpPacket(
        from: Fixtures.endpoint(Fixtures.device, 40200), to: Endpoint("10.66.0.1:9")!,
        payload: bytes)
    }
    let clean = Fixtures.audit(
      [probe(payload)] + Fixtures.torFlow, linkType: Self.sll2, policy: policy)
    #expect(clean.verdict == .pass)
    #expect(clean.statistics.controlPackets == 1)
    // The prefix with data after it, or the run's payload with a byte changed, is a leak.
    let smuggled = Fixtures.audit(
      [probe(payload), probe(SyncProbe.defaultPrefix + Array(" secret".utf8))],
      linkType: Self.sll2, policy: policy)
    #expect(smuggled.leaks.map(\.leakClass) == [.udp])
    // More probes than the harness ever sends: the extra ones are leaks.
    let flood = Fixtures.audit(
      [[UInt8]](repeating: probe(payload), count: SyncProbe.maximumPackets + 3),
      linkType: Self.sll2, policy: policy)
    #expect(flood.statistics.controlPackets == SyncProbe.maximumPackets)
    #expect(flood.leaks.map(\.reason) == ["probe-imitation"])
    #expect(flood.leaks.first?.packets == 3)
    // A file audited later accepts the harness's format, and nothing else.
    policy.syncProbe = SyncProbe(destination: Endpoint("10.66.0.1:9")!, payload: nil)
    #expect(
      Fixtures.audit([probe(payload)], linkType: Self.sll2, policy: policy).statistics
        .controlPackets == 1)
    #expect(
      Fixtures.audit(
        [probe(SyncProbe.defaultPrefix + Array(" fc-1a2b3c exfiltrate-this-1234".utf8))],
        linkType: Self.sll2, policy: policy
      ).verdict == .leak)
  }

  // MARK: IP options, routing headers, fragments

  @Test func sourceRoutedOrRecordRoutedTrafficToTheGuardIsALeak() {
    let tcp = FrameBuilder.tcp(sourcePort: 41000, destinationPort: 9001, flags: 0x02)
    let withOptions = { (options: [UInt8]) in
      FrameBuilder.ipv4(
        source: Fixtures.device, destination: Fixtures.guardEndpoint.address,
        proto: IPProtocolNumber.tcp, payload: tcp, options: options)
    }
    // Loose source route via a world host, record route, and router alert (ordinary).
    let lsrr = withOptions([131, 7, 4] + Fixtures.world.bytes)
    let recordRoute = withOptions([7, 7, 4, 0, 0, 0, 0])
    let routerAlert = withOptions([148, 4, 0, 0])
    #expect(Self.audit([lsrr]).leaks.map(\.reason) == ["ip-options"])
    #expect(Self.audit([lsrr]).leaks.first?.evidence?.contains("source route") == true)
    #expect(Self.audit([recordRoute]).leaks.map(\.reason) == ["ip-options"])
    #expect(Self.audit([routerAlert]).verdict == .pass)
    // Options on a later packet of an already allowed flow are caught too.
    let report = Self.audit(Fixtures.torFlow + [lsrr])
    #expect(report.leaks.map(\.reason) == ["ip-options"])
  }

  @Test func anIPv6RoutingHeaderToTheGuardIsALeak() {
    let tcp = FrameBuilder.tcp(sourcePort: 41000, destinationPort: 9001, flags: 0x02)
    let routed = FrameBuilder.ipv6(
      source: Fixtures.device6, destination: Self.guard6.address, proto: IPProtocolNumber.tcp,
      payload: tcp, extensions: [.routing])
    let plain = FrameBuilder.ipv6(
      source: Fixtures.device6, destination: Self.guard6.address, proto: IPProtocolNumber.tcp,
      payload: tcp)
    #expect(Self.audit([plain]).verdict == .pass)
    let report = Self.audit([plain, routed])
    #expect(report.leaks.map(\.reason) == ["ipv6-routing-header"])
    #expect(report.leaks.map(\.leakClass) == [.ipv6])
  }

  @Test func fragmentsThatDisagreeAboutTheirHeaderAreALeak() {
    let first = FrameBuilder.ipv4(
      source: Fixtures.device, destination: Fixtures.guardEndpoint.address,
      proto: IPProtocolNumber.tcp,
      payload: FrameBuilder.tcp(sourcePort: 41000, destinationPort: 9001, flags: 0x18)
        + [UInt8](repeating: 1, count: 20), id: 77, moreFragments: true)
    // A second first fragment of the same datagram with the DNS port in its header.
    let rewrite = FrameBuilder.ipv4(
      source: Fixtures.device, destination: Fixtures.guardEndpoint.address,
      proto: IPProtocolNumber.tcp,
      payload: FrameBuilder.tcp(sourcePort: 41000, destinationPort: 53, flags: 0x18), id: 77,
      moreFragments: true)
    // A later fragment at byte 8 (inside the TCP header: RFC 1858's overlap).
    let overlap = FrameBuilder.ipv4(
      source: Fixtures.device, destination: Fixtures.guardEndpoint.address,
      proto: IPProtocolNumber.tcp, payload: [UInt8](repeating: 2, count: 16), id: 77,
      fragmentOffset: 8)
    // The clean control: the rest of the datagram after the first fragment's 40 bytes.
    let tail = FrameBuilder.ipv4(
      source: Fixtures.device, destination: Fixtures.guardEndpoint.address,
      proto: IPProtocolNumber.tcp, payload: [UInt8](repeating: 3, count: 16), id: 77,
      fragmentOffset: 40)
    var plainTCP = Self.policy
    plainTCP.allowed.insert(Fixtures.guardEndpoint, as: .tcp)
    #expect(Fixtures.audit([first, tail], linkType: Self.sll2, policy: plainTCP).verdict == .pass)
    #expect(Self.audit([first, rewrite]).leaks.map(\.reason) == ["fragment-overlap"])
    #expect(Self.audit([first, overlap]).leaks.map(\.reason) == ["fragment-overlap"])
  }
}
