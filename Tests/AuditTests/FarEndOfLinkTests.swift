import Audit
import SyntheticTraffic
import Testing

/// The sandbox's second capture sits on the censor's end of the device's link, where the
/// kernel's packet type is the reverse of the device's: a frame the device sent is received
/// there. With `farEndOfLink` the audit reads it so; cooked frames only (an Ethernet frame's
/// source MAC names its sender from either end).
@Suite struct FarEndOfLinkTests {
  static var farEnd: AuditPolicy {
    var policy = Fixtures.policy
    policy.farEndOfLink = true
    return policy
  }

  static let dnsLeak = FrameBuilder.udpPacket(
    from: Fixtures.endpoint(Fixtures.device, 40000), to: Fixtures.endpoint(Fixtures.world, 53),
    payload: FrameBuilder.dnsQuery(name: "far.example"))

  @Test(arguments: [LinkType.linuxSLL2, .linuxSLL])
  func theDecoderReversesTheKernelsPacketTypeAtTheFarEnd(linkType: LinkType) {
    for (sentHere, seenFromDevice) in [(true, PacketDirection.outbound), (false, .inbound)] {
      let frame = FrameBuilder.frame(linkType, ip: Self.dnsLeak, outbound: sentHere)
      let near = frame.withUnsafeBytes { PacketDecoder(linkType: linkType).decode($0) }
      let far = frame.withUnsafeBytes {
        PacketDecoder(linkType: linkType, farEndOfLink: true).decode($0)
      }
      #expect(near.direction == seenFromDevice)
      #expect(far.direction == seenFromDevice.reversed)
    }
  }

  @Test func anEthernetFramesSenderIsItsMACFromEitherEnd() {
    let frame = FrameBuilder.frame(.ethernet, ip: Self.dnsLeak, outbound: true)
    let far = frame.withUnsafeBytes {
      PacketDecoder(
        linkType: .ethernet, deviceLinkAddresses: [FrameBuilder.deviceMACValue], farEndOfLink: true
      ).decode($0)
    }
    #expect(far.direction == .outbound)
  }

  @Test(arguments: [LinkType.linuxSLL2, .linuxSLL])
  func aFrameTheFarEndReceivedFromTheDeviceIsALeak(linkType: LinkType) {
    // Canary: received at the far end means sent by the device.
    let far = Fixtures.audit(
      [Self.dnsLeak], linkType: linkType, policy: Self.farEnd, outbound: [false])
    #expect(far.verdict == .leak)
    #expect(far.leaks.map(\.leakClass) == [.dns])
    #expect(far.leaks.first?.direction == "outbound")
    #expect(far.leaks.first?.names == ["far.example"])
    // The same frame read as the device's end reads it arrived, and leaked nothing.
    let near = Fixtures.audit([Self.dnsLeak], linkType: linkType, outbound: [false])
    #expect(near.leaks.isEmpty)
  }

  @Test(arguments: [LinkType.linuxSLL2, .linuxSLL])
  func theCleanTorFlowSeenFromTheFarEndPasses(linkType: LinkType) {
    // Positive control: every frame's packet type reversed, as the censor's end sees them.
    let reversed = Fixtures.torFlow.map { !Fixtures.sentByDevice($0) }
    let far = Fixtures.audit(
      Fixtures.torFlow, linkType: linkType, policy: Self.farEnd, outbound: reversed)
    #expect(far.verdict == .pass)
    #expect(far.statistics.allowedPackets == Fixtures.torFlow.count)
    // Read without the flag, the device's replies look sent by it: the flag is what passes.
    let unflagged = Fixtures.audit(Fixtures.torFlow, linkType: linkType, outbound: reversed)
    #expect(unflagged.verdict == .leak)
  }
}
