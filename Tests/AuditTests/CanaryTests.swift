import Audit
import SyntheticTraffic
import Testing

/// Every leak class must be caught on every link type; the allowed Tor flow must pass.
@Suite struct CanaryTests {
  static let linkTypes: [LinkType] = [.ethernet, .linuxSLL, .linuxSLL2, .raw, .rawDLT, .null]

  @Test(arguments: linkTypes)
  func everyCanaryIsCaughtWithItsClass(linkType: LinkType) {
    for (name, leakClass, packet) in Fixtures.canaries {
      let report = Fixtures.audit([packet], linkType: linkType)
      #expect(report.verdict == .leak, "\(name) on \(linkType.name)")
      #expect(report.leaks.map(\.leakClass) == [leakClass], "\(name) on \(linkType.name)")
    }
  }

  @Test(arguments: linkTypes)
  func theAllowedTorFlowPasses(linkType: LinkType) {
    let report = Fixtures.audit(Fixtures.torFlow, linkType: linkType)
    #expect(report.verdict == .pass)
    #expect(report.leaks.isEmpty)
    #expect(report.statistics.allowedPackets == 4)
    #expect(report.flows.count == 2)
  }

  @Test func aLeakAmongAllowedTrafficIsStillALeak() {
    let packets = Fixtures.torFlow + [Fixtures.canaries[0].2] + Fixtures.torFlow
    let report = Fixtures.audit(packets)
    #expect(report.verdict == .leak)
    #expect(report.leaks.count == 1)
    #expect(report.leaks[0].names == ["leak.example"])
    #expect(report.leaks[0].destination == "10.66.1.20:53")
    #expect(report.leaks[0].firstOffset > 0.003 && report.leaks[0].firstOffset < 0.005)
  }

  @Test func linkControlIsReportedApartAndIsNoLeak() {
    for (name, kind, packet, etherType) in Fixtures.linkControl {
      let report = Fixtures.audit([packet], etherType: etherType)
      #expect(report.verdict == .pass, "\(name)")
      #expect(report.linkControl.total == 1, "\(name)")
      let counted: Int
      switch kind {
      case .arp: counted = report.linkControl.arp
      case .neighbourDiscovery: counted = report.linkControl.neighbourDiscovery
      case .mld: counted = report.linkControl.mld
      case .igmp: counted = report.linkControl.igmp
      }
      #expect(counted == 1, "\(name)")
    }
  }

  @Test func neighbourDiscoveryWithAForgedHopLimitIsALeak() {
    let packet = FrameBuilder.ip(
      source: Fixtures.device6, destination: Fixtures.world6, proto: IPProtocolNumber.icmpv6,
      payload: FrameBuilder.icmp(type: 135), hopLimit: 64)
    let report = Fixtures.audit([packet])
    #expect(report.verdict == .leak)
    #expect(report.leaks.map(\.leakClass) == [.ipv6])
  }

  @Test func anUnknownEtherTypeIsAnOtherProtocolLeak() {
    let report = Fixtures.audit([[1, 2, 3, 4]], etherType: 0x88CC)
    #expect(report.verdict == .leak)
    #expect(report.leaks.map(\.leakClass) == [.otherProtocol])
  }

  @Test func namesInClearAreEvidence() {
    let sni = FrameBuilder.tcpPacket(
      from: Fixtures.endpoint(Fixtures.device, 40100), to: Fixtures.endpoint(Fixtures.world, 443),
      payload: FrameBuilder.tlsClientHello(serverName: "Secret.Example"))
    let http = FrameBuilder.tcpPacket(
      from: Fixtures.endpoint(Fixtures.device, 40101), to: Fixtures.endpoint(Fixtures.world, 80),
      payload: FrameBuilder.httpRequest(host: "plain.example:8080"))
    let report = Fixtures.audit([sni, http])
    #expect(report.leaks.count == 2)
    #expect(Set(report.leaks.flatMap(\.names)) == ["secret.example", "plain.example:8080"])
    #expect(report.flows.flatMap(\.names).sorted() == ["plain.example:8080", "secret.example"])
  }

  @Test func theSyncProbeIsControlNotALeak() {
    var policy = Fixtures.policy
    policy.syncProbe = Fixtures.probe
    let probe = FrameBuilder.udpPacket(
      from: Fixtures.endpoint(Fixtures.device, 40200), to: Fixtures.probe.destination,
      payload: SyncProbe.defaultPrefix + Array(" fc-1a2b3c".utf8))
    let report = Fixtures.audit([probe] + Fixtures.torFlow, policy: policy)
    #expect(report.verdict == .pass)
    #expect(report.statistics.controlPackets == 1)
    // The same destination without the prefix is an ordinary leak.
    let impostor = FrameBuilder.udpPacket(
      from: Fixtures.endpoint(Fixtures.device, 40201), to: Fixtures.probe.destination,
      payload: Array("hello".utf8))
    let leaked = Fixtures.audit([probe, impostor], policy: policy)
    #expect(leaked.verdict == .leak)
    #expect(leaked.leaks.map(\.leakClass) == [.udp])
  }

  @Test func anICMPErrorAboutAnAllowedFlowIsAllowed() {
    let quoted = FrameBuilder.tcpPacket(
      from: Fixtures.endpoint(Fixtures.device, 41000), to: Fixtures.guardEndpoint, flags: 0x02)
    let error = FrameBuilder.ip(
      source: IPAddress("10.66.0.1")!, destination: Fixtures.device, proto: IPProtocolNumber.icmp,
      payload: FrameBuilder.icmp(type: 3, code: 3, rest: [0, 0, 0, 0]) + Array(quoted.prefix(28)))
    let report = Fixtures.audit([quoted, error])
    #expect(report.verdict == .pass)
    #expect(report.statistics.allowedPackets == 2)
  }

  @Test func repliesToALeakAreCountedWithIt() {
    let query = Fixtures.canaries[0].2
    let answer = FrameBuilder.udpPacket(
      from: Fixtures.endpoint(Fixtures.world, 53), to: Fixtures.endpoint(Fixtures.device, 40000),
      payload: FrameBuilder.dnsQuery(name: "leak.example"))
    let report = Fixtures.audit([query, answer])
    #expect(report.leaks.count == 1)
    #expect(report.leaks[0].packets == 1)
    #expect(report.leaks[0].replyPackets == 1)
    #expect(report.statistics.leakReplyPackets == 1)
  }

  @Test func knownDeviceAddressesMakeUnsolicitedTrafficInbound() {
    var policy = Fixtures.bare
    policy.deviceAddresses = [Fixtures.device]
    let unsolicited = FrameBuilder.tcpPacket(
      from: Fixtures.endpoint(Fixtures.world, 80), to: Fixtures.endpoint(Fixtures.device, 22),
      flags: 0x02)
    let report = Fixtures.audit([unsolicited], policy: policy)
    #expect(report.verdict == .pass)
    #expect(report.statistics.inboundPackets == 1)
  }
}
