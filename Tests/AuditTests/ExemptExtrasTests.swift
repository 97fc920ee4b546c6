import Audit
import SyntheticTraffic
import Testing

/// Issue 28's third case and its class: every extension header and option on an exempt
/// packet (link control, ICMP errors, the probe) carries nothing. Padding is zero and no
/// longer than alignment needs, only the options the protocol needs, nothing after the
/// message. Canaries must be caught with their reason; Linux's own forms must pass.
@Suite struct ExemptExtrasTests {
  static let mldReport = FrameBuilder.mldv2Report(groups: [IPAddress("ff02::1:ff00:2")!])
  static let linkLocal = IPAddress("fe80::2")!
  static let mldGroup = IPAddress("ff02::16")!

  static func mld(_ extensions: [FrameBuilder.ExtensionHeader]) -> [UInt8] {
    FrameBuilder.ipv6(
      source: linkLocal, destination: mldGroup, proto: IPProtocolNumber.icmpv6,
      payload: mldReport, extensions: extensions, hopLimit: 1)
  }

  static func audit(_ packet: [UInt8], linkType: LinkType = .linuxSLL2) -> AuditReport {
    Fixtures.audit([packet], linkType: linkType, etherType: 0x86DD)
  }

  @Test(arguments: [LinkType.ethernet, .linuxSLL2, .raw])
  func anMLDReportWithDataInItsPadNIsALeak(linkType: LinkType) {
    // Router alert, then PadN with 8 bytes of data: RFC 8200's PadN carries zeros.
    let options: [UInt8] = [5, 2, 0, 0, 1, 8] + Array("EXFILDAT".utf8)
    let report = Fixtures.audit(
      [Self.mld([.options(header: 0, options)])], linkType: linkType, etherType: 0x86DD)
    #expect(report.verdict == .leak, "\(AuditSummary.text(report))")
    let leak = report.leaks.first
    #expect(leak?.reason == "ipv6-extension-options")
    #expect(leak?.evidence?.contains("PadN carries 8 bytes") == true, "\(leak?.evidence ?? "")")
    #expect(leak?.evidence?.contains("EXFILDAT") == true)
  }

  @Test func linuxsOwnMLDReportPasses() {
    let report = Self.audit(Self.mld([.hopByHop]))
    #expect(report.verdict == .pass, "\(AuditSummary.text(report))")
    #expect(report.linkControl.mld == 1)
    // Zero padding alone (no router alert) is harmless too.
    #expect(Self.audit(Self.mld([.options(header: 0, [1, 4, 0, 0, 0, 0])])).verdict == .pass)
  }

  static let mldCanaries: [(String, [FrameBuilder.ExtensionHeader], String)] = [
    (
      "an unknown option", [.options(header: 0, [0x1E, 4, 0x41, 0x42, 0x43, 0x44])],
      "ipv6-extension-options"
    ),
    (
      "a router alert for RSVP", [.options(header: 0, [5, 2, 0, 1, 1, 0])], "ipv6-extension-options"
    ),
    (
      "padding past 7 bytes", [.options(header: 0, [1, 12] + [UInt8](repeating: 0, count: 12))],
      "ipv6-extension-options"
    ),
    ("a destination options header", [.hopByHop, .destinationOptions], "header-not-needed"),
    (
      "a fragment header", [.hopByHop, .fragment(offset: 0, more: false, id: 5)],
      "header-not-needed"
    ),
  ]

  @Test(arguments: mldCanaries.indices)
  func mldCarryingAnythingItDoesNotNeedIsALeak(index: Int) {
    let (name, extensions, reason) = Self.mldCanaries[index]
    let report = Self.audit(Self.mld(extensions))
    #expect(report.leaks.map(\.reason) == [reason], "\(name): \(AuditSummary.text(report))")
  }

  @Test func neighbourDiscoveryTakesNoExtensionHeaderAtAll() {
    let solicitation = FrameBuilder.ipv6(
      source: Self.linkLocal, destination: IPAddress("ff02::1:ff00:1")!,
      proto: IPProtocolNumber.icmpv6,
      payload: FrameBuilder.neighbourSolicitation(target: IPAddress("fd66::1")!),
      extensions: [.destinationOptions], hopLimit: 255)
    #expect(Self.audit(solicitation).leaks.map(\.reason) == ["header-not-needed"])
  }

  @Test func anIGMPReportWithDataAfterTheEndOfOptionsIsALeak() {
    // Router alert, then end of options followed by bytes that are not zero.
    var packet = FrameBuilder.ipv4(
      source: Fixtures.device, destination: IPAddress("224.0.0.22")!, proto: IPProtocolNumber.igmp,
      payload: FrameBuilder.igmpv3Report(groups: [IPAddress("224.0.0.251")!]), ttl: 1,
      options: [148, 4, 0, 0, 0, 0x41, 0x42, 0x43])
    var report = Fixtures.audit([packet], linkType: .linuxSLL2, etherType: 0x0800)
    #expect(report.leaks.count == 1, "\(AuditSummary.text(report))")
    packet = FrameBuilder.ipv4(
      source: Fixtures.device, destination: IPAddress("224.0.0.22")!, proto: IPProtocolNumber.igmp,
      payload: FrameBuilder.igmpv3Report(groups: [IPAddress("224.0.0.251")!]), ttl: 1,
      options: [148, 4, 0, 0])
    report = Fixtures.audit([packet], linkType: .linuxSLL2, etherType: 0x0800)
    #expect(report.verdict == .pass, "\(AuditSummary.text(report))")
  }

  @Test func theProbeCarriesNoOptionAndNothingAfterItsPayload() {
    var policy = Fixtures.policy
    policy.syncProbe = SyncProbe(destination: Endpoint("10.66.0.1:9")!, payload: nil)
    let probe = FrameBuilder.udp(
      sourcePort: 40000, destinationPort: 9, payload: SyncProbe.defaultPrefix)
    let clean = FrameBuilder.ipv4(
      source: Fixtures.device, destination: IPAddress("10.66.0.1")!, proto: IPProtocolNumber.udp,
      payload: probe)
    #expect(Fixtures.audit([clean], linkType: .linuxSLL2, policy: policy).verdict == .pass)
    let alerted = FrameBuilder.ipv4(
      source: Fixtures.device, destination: IPAddress("10.66.0.1")!, proto: IPProtocolNumber.udp,
      payload: probe, options: [148, 4, 0, 0])
    #expect(Fixtures.audit([alerted], linkType: .linuxSLL2, policy: policy).verdict == .leak)
    // Bytes inside the IP packet after the UDP datagram's own length.
    let trailing = FrameBuilder.ipv4(
      source: Fixtures.device, destination: IPAddress("10.66.0.1")!, proto: IPProtocolNumber.udp,
      payload: probe + Array("SECRET".utf8))
    let report = Fixtures.audit([trailing], linkType: .linuxSLL2, policy: policy)
    #expect(report.leaks.map(\.reason) == ["trailing-data"], "\(AuditSummary.text(report))")
    #expect(report.leaks.first?.evidence?.contains("SECRET") == true)
  }

  @Test func bytesPastTheDatagramInTheFrameAreALeakEvenToTheGuard() {
    let syn = FrameBuilder.tcpPacket(
      from: Fixtures.endpoint(Fixtures.device, 41000), to: Fixtures.guardEndpoint, flags: 0x02)
    let frame = FrameBuilder.frame(.linuxSLL2, ip: syn, outbound: true) + Array("SECRET".utf8)
    let auditor = Auditor(linkType: .linuxSLL2, policy: Fixtures.policy)
    _ = frame.withUnsafeBytes { auditor.consume(timestamp: 1, wireLength: $0.count, frame: $0) }
    let report = auditor.report()
    #expect(report.leaks.map(\.reason) == ["trailing-data"], "\(AuditSummary.text(report))")
    // Ethernet's zero padding is not.
    let padded =
      FrameBuilder.frame(.ethernet, ip: syn, outbound: true) + [UInt8](repeating: 0, count: 6)
    let ethernet = Auditor(linkType: .ethernet, policy: Fixtures.policy)
    _ = padded.withUnsafeBytes { ethernet.consume(timestamp: 1, wireLength: $0.count, frame: $0) }
    #expect(ethernet.report().verdict == .pass)
  }

  @Test func anICMPErrorToTheGuardTakesNoExtensionHeader() {
    let guard6 = Endpoint("[fd66:1::10]:9001")!
    var policy = Fixtures.policy
    policy.allowed.insert(guard6, as: .orPort)
    let quoted = FrameBuilder.tcpPacket(
      from: guard6, to: Fixtures.endpoint(Fixtures.device6, 41000), flags: 0x12)
    let error = FrameBuilder.ipv6(
      source: Fixtures.device6, destination: guard6.address, proto: IPProtocolNumber.icmpv6,
      payload: FrameBuilder.icmp(type: 1, code: 4, rest: [0, 0, 0, 0]) + quoted,
      extensions: [.destinationOptions])
    let report = Fixtures.audit([error], linkType: .linuxSLL2, policy: policy)
    #expect(report.leaks.map(\.reason) == ["header-not-needed"], "\(AuditSummary.text(report))")
  }

  /// TCP options are a place to carry data past the stream too: only the kinds stacks send,
  /// at their lengths, zeros after the end mark.
  @Test func tcpOptionsCarryingDataAreALeakEvenToTheGuard() {
    func syn(_ options: [UInt8]) -> [UInt8] {
      let padded = options + [UInt8](repeating: 0, count: (4 - options.count % 4) % 4)
      var tcp = FrameBuilder.tcp(sourcePort: 41000, destinationPort: 9001, flags: 0x02)
      tcp[12] = UInt8((20 + padded.count) / 4) << 4
      return FrameBuilder.ipv4(
        source: Fixtures.device, destination: Fixtures.guardEndpoint.address,
        proto: IPProtocolNumber.tcp, payload: Array(tcp.prefix(20)) + padded)
    }
    // Linux's SYN: MSS, SACK permitted, timestamps, no-op, window scale.
    let linux: [UInt8] = [2, 4, 5, 0xB4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7]
    #expect(Fixtures.audit([syn(linux)], linkType: .linuxSLL2).verdict == .pass)
    let canaries: [(String, [UInt8])] = [
      ("an experimental option with data", [254, 10] + Array("EXFILDAT".utf8)),
      ("an MSS of the wrong length", [2, 6, 5, 0xB4, 0x41, 0x41]),
      ("data after the end of options", [2, 4, 5, 0xB4, 0, 0x41, 0x42, 0x43]),
    ]
    for (name, options) in canaries {
      let report = Fixtures.audit([syn(options)], linkType: .linuxSLL2)
      #expect(
        report.leaks.map(\.reason) == ["tcp-options"], "\(name): \(AuditSummary.text(report))")
    }
    let evidence = Fixtures.audit([syn(canaries[0].1)], linkType: .linuxSLL2).leaks.first?.evidence
    #expect(evidence?.contains("EXFILDAT") == true, "\(evidence ?? "")")
  }
}
