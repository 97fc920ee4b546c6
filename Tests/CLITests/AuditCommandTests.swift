import Audit
import Capture
import FailClosedCLI
import Foundation
import SyntheticTraffic
import Testing

@Suite struct AuditCommandTests {
  static let guardEndpoint = Endpoint("10.99.1.10:9001")!
  static let device = Endpoint("10.99.0.2:41000")!

  /// A capture in a fresh directory: allowed traffic, plus a DNS leak if asked.
  func capture(leak: Bool, probe: Bool = false) throws -> (directory: URL, path: String) {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "fc-cli-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let path = directory.appendingPathComponent("capture.pcap").path
    let writer = try PcapWriter(path: path, linkType: .linuxSLL2)
    var packets = [FrameBuilder.tcpPacket(from: Self.device, to: Self.guardEndpoint, flags: 0x02)]
    if probe {
      packets.append(
        FrameBuilder.udpPacket(
          from: Self.device, to: Endpoint("10.99.0.1:9")!, payload: SyncProbe.defaultPrefix))
    }
    if leak {
      packets.append(
        FrameBuilder.udpPacket(
          from: Self.device, to: Endpoint("10.99.1.20:53")!,
          payload: FrameBuilder.dnsQuery(name: "cli.example")))
    }
    for (index, packet) in packets.enumerated() {
      writer.write(
        timestamp: Int64(index) * 1_000_000, frame: FrameBuilder.frame(.linuxSLL2, ip: packet))
    }
    writer.close()
    return (directory, path)
  }

  @Test func exitCodesFollowTheVerdict() async throws {
    let clean = try capture(leak: false)
    defer { try? FileManager.default.removeItem(at: clean.directory) }
    #expect(await FailClosedMain.run(["audit", clean.path, "--allow", "10.99.1.10:9001"]) == 0)
    // Without the allowance the guard connection itself is a leak.
    #expect(await FailClosedMain.run(["audit", clean.path]) == 5)
    // A required probe that is missing is inconclusive, never a pass.
    #expect(
      await FailClosedMain.run([
        "audit", clean.path, "--allow", "10.99.1.10:9001", "--sync-probe", "10.99.0.1:9",
      ]) == 2)
    let probed = try capture(leak: false, probe: true)
    defer { try? FileManager.default.removeItem(at: probed.directory) }
    #expect(
      await FailClosedMain.run([
        "audit", probed.path, "--allow", "10.99.1.10:9001", "--sync-probe", "10.99.0.1:9",
      ]) == 0)
  }

  @Test func aLeakIsWrittenToTheJSONReport() async throws {
    let leaky = try capture(leak: true)
    defer { try? FileManager.default.removeItem(at: leaky.directory) }
    let reportDirectory = leaky.directory.appendingPathComponent("report").path
    let code = await FailClosedMain.run([
      "audit", leaky.path, "--allow=10.99.1.10:9001", "--report", reportDirectory,
    ])
    #expect(code == 5)
    let data = try Data(contentsOf: URL(fileURLWithPath: reportDirectory + "/audit.json"))
    let report = try JSONDecoder().decode(AuditReport.self, from: data)
    #expect(report.verdict == .leak)
    #expect(report.leaks.map(\.leakClass) == [.dns])
    #expect(report.leaks.first?.names == ["cli.example"])
    #expect(report.leaks.first?.destination == "10.99.1.20:53")
  }

  /// Writes `packets` (IP packets, each with whether the device sent it) as a `linkType` file.
  func file(_ packets: [([UInt8], Bool)], linkType: LinkType) throws -> (URL, String) {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "fc-cli-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let path = directory.appendingPathComponent("capture.pcap").path
    let writer = try PcapWriter(path: path, linkType: linkType)
    for (index, (packet, outbound)) in packets.enumerated() {
      writer.write(
        timestamp: Int64(index) * 1_000_000,
        frame: FrameBuilder.frame(linkType, ip: packet, outbound: outbound))
    }
    writer.close()
    return (directory, path)
  }

  /// Issue 28's false passes as pcap files, SLL2 and Ethernet, through `failclosed audit`:
  /// UDP DNS to the guard's ORPort, clear HTTP straight to it after a SYN, an MLD report with
  /// data in its PadN; each its own file, each a leak with its class and reason. The clean
  /// controls: tor's own opening (SYN, ClientHello) to the ORPort, obfs4-like random bytes to
  /// a bridge given as obfs4:, a directory request to a DirPort, Linux's MLD report.
  @Test(arguments: [LinkType.linuxSLL2, .ethernet])
  func issue28FalsePassesInAFileAreCaught(linkType: LinkType) async throws {
    let syn = FrameBuilder.tcpPacket(
      from: Self.device, to: Self.guardEndpoint, flags: 0x02, sequence: 7)
    let mldReport = FrameBuilder.mldv2Report(groups: [IPAddress("ff02::1:ff00:2")!])
    func mld(_ options: [UInt8]?) -> [UInt8] {
      FrameBuilder.ipv6(
        source: IPAddress("fe80::2")!, destination: IPAddress("ff02::16")!,
        proto: IPProtocolNumber.icmpv6, payload: mldReport,
        extensions: [options.map { .options(header: 0, $0) } ?? .hopByHop], hopLimit: 1)
    }
    let request = Array(
      "GET http://clear.example/secret HTTP/1.1\r\nHost: clear.example\r\n\r\n".utf8)
    let cases: [(String, [UInt8], LeakClass, String)] = [
      (
        "UDP DNS to the ORPort",
        FrameBuilder.udpPacket(
          from: Self.device, to: Self.guardEndpoint,
          payload: FrameBuilder.dnsQuery(name: "secret.example")), .dns, "protocol-not-allowed"
      ),
      (
        "clear HTTP to the ORPort",
        FrameBuilder.tcpPacket(
          from: Self.device, to: Self.guardEndpoint, sequence: 8, payload: request),
        .clearOnTorEndpoint, "content-not-allowed"
      ),
      (
        "MLD with data in PadN", mld([5, 2, 0, 0, 1, 8] + Array("EXFILDAT".utf8)), .multicast,
        "ipv6-extension-options"
      ),
      (
        "neighbour solicitation with a destination options header",
        FrameBuilder.ipv6(
          source: IPAddress("fe80::2")!, destination: IPAddress("ff02::1:ff00:1")!,
          proto: IPProtocolNumber.icmpv6,
          payload: FrameBuilder.neighbourSolicitation(target: IPAddress("fe80::1")!),
          extensions: [.destinationOptions], hopLimit: 255), .multicast, "header-not-needed"
      ),
      (
        "a second SYN to the guard with bytes after its datagram",
        FrameBuilder.tcpPacket(from: Self.device, to: Self.guardEndpoint, flags: 0x02, sequence: 7)
          + Array("SECRET".utf8), .tcp, "trailing-data"
      ),
    ]
    for (name, packet, leakClass, reason) in cases {
      let (directory, path) = try file([(syn, true), (packet, true)], linkType: linkType)
      defer { try? FileManager.default.removeItem(at: directory) }
      let reportDirectory = directory.appendingPathComponent("report").path
      var arguments = ["audit", path, "--allow", "10.99.1.10:9001", "--report", reportDirectory]
      if linkType == .ethernet { arguments += ["--device-mac", "02:00:00:00:00:01"] }
      #expect(await FailClosedMain.run(arguments) == 5, "\(name)")
      let data = try Data(contentsOf: URL(fileURLWithPath: reportDirectory + "/audit.json"))
      let report = try JSONDecoder().decode(AuditReport.self, from: data)
      #expect(report.leaks.map(\.leakClass) == [leakClass], "\(name)")
      #expect(report.leaks.map(\.reason) == [reason], "\(name)")
      #expect(report.allowed == ["orport:10.99.1.10:9001"])
    }
    // Data to the ORPort whose SYN the file does not hold: inconclusive, never a pass.
    let midStream = FrameBuilder.tcpPacket(
      from: Self.device, to: Self.guardEndpoint, sequence: 900, payload: [0x17, 3, 3, 0, 1, 0])
    let (cutDirectory, cutPath) = try file([(midStream, true)], linkType: linkType)
    defer { try? FileManager.default.removeItem(at: cutDirectory) }
    var cutArguments = ["audit", cutPath, "--allow", "10.99.1.10:9001"]
    if linkType == .ethernet { cutArguments += ["--device-mac", "02:00:00:00:00:01"] }
    #expect(await FailClosedMain.run(cutArguments) == 2)
    // The clean controls in one file.
    let bridge = Endpoint("10.99.1.12:4433")!
    let dirPort = Endpoint("10.99.1.11:9030")!
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    let random = (0..<300).map { _ -> UInt8 in
      state ^= state << 13
      state ^= state >> 7
      state ^= state << 17
      return UInt8(truncatingIfNeeded: state)
    }
    let clean: [([UInt8], Bool)] = [
      (syn, true),
      (
        FrameBuilder.tcpPacket(
          from: Self.device, to: Self.guardEndpoint, sequence: 8,
          payload: FrameBuilder.tlsClientHello(serverName: "www.qxz4rw.com")), true
      ),
      (FrameBuilder.tcpPacket(from: Self.device, to: bridge, flags: 0x02, sequence: 1), true),
      (FrameBuilder.tcpPacket(from: Self.device, to: bridge, sequence: 2, payload: random), true),
      (FrameBuilder.tcpPacket(from: Self.device, to: dirPort, flags: 0x02, sequence: 1), true),
      (
        FrameBuilder.tcpPacket(
          from: Self.device, to: dirPort, sequence: 2,
          payload: Array("GET /tor/server/authority.z HTTP/1.0\r\n\r\n".utf8)), true
      ),
      (mld(nil), true),
    ]
    let (directory, path) = try file(clean, linkType: linkType)
    defer { try? FileManager.default.removeItem(at: directory) }
    var arguments = [
      "audit", path, "--allow", "orport:10.99.1.10:9001", "--allow", "obfs4:10.99.1.12:4433",
      "--allow", "dirport:10.99.1.11:9030",
    ]
    if linkType == .ethernet { arguments += ["--device-mac", "02:00:00:00:00:01"] }
    #expect(await FailClosedMain.run(arguments) == 0)
    // The random bytes to the same bridge given as an ORPort are not TLS: a leak.
    arguments[5] = "orport:10.99.1.12:4433"
    #expect(await FailClosedMain.run(arguments) == 5)
  }

  /// Issue 11's evasions as pcap files: a DNS query leaving with the guard forged as its
  /// source, and an ICMP error quoting the guard's flow sent to another host with data.
  @Test func evasionsInAFileAreLeaksWithTheirReasons() async throws {
    let forged = FrameBuilder.udpPacket(
      from: Self.guardEndpoint, to: Endpoint("10.99.1.20:53")!,
      payload: FrameBuilder.dnsQuery(name: "forged.example"))
    let quoted = FrameBuilder.tcpPacket(from: Self.guardEndpoint, to: Self.device, flags: 0x12)
    let error = FrameBuilder.icmpError(
      from: Self.device.address, to: IPAddress("10.99.1.20")!, quoting: quoted,
      extra: [UInt8](repeating: 0x41, count: 200))
    let syn = FrameBuilder.tcpPacket(from: Self.device, to: Self.guardEndpoint, flags: 0x02)
    let (directory, path) = try file(
      [(syn, true), (quoted, false), (forged, true), (error, true)], linkType: .linuxSLL2)
    defer { try? FileManager.default.removeItem(at: directory) }
    let reportDirectory = directory.appendingPathComponent("report").path
    #expect(
      await FailClosedMain.run([
        "audit", path, "--allow", "10.99.1.10:9001", "--report", reportDirectory,
      ]) == 5)
    let data = try Data(contentsOf: URL(fileURLWithPath: reportDirectory + "/audit.json"))
    let report = try JSONDecoder().decode(AuditReport.self, from: data)
    #expect(Set(report.leaks.map(\.leakClass)) == [.dns, .icmp])
    #expect(report.leaks.first { $0.leakClass == .dns }?.reason == "forged-source")
    #expect(report.leaks.allSatisfy { $0.direction == "outbound" })
    #expect(report.statistics.allowedPackets == 2)
  }

  /// Every evasion class of issue 11 as its own SLL2 file through `failclosed audit`: each is a
  /// leak (exit 5) with its reason, and the file with only the guard flow passes.
  @Test func everyEvasionClassInAFileIsCaughtWithItsReason() async throws {
    let device = Self.device.address
    let guardAddress = Self.guardEndpoint.address
    let syn = FrameBuilder.tcp(sourcePort: 41000, destinationPort: 9001, flags: 0x02)
    let fromGuard = FrameBuilder.tcpPacket(from: Self.guardEndpoint, to: Self.device, flags: 0x12)
    let ns = FrameBuilder.neighbourSolicitation(target: IPAddress("fd66::1")!)
    let cases: [(String, [UInt8], UInt16?, String)] = [
      (
        "forged guard source",
        FrameBuilder.udpPacket(
          from: Self.guardEndpoint, to: Endpoint("10.99.1.53:53")!,
          payload: FrameBuilder.dnsQuery(name: "f.example")), nil, "forged-source"
      ),
      (
        "ICMP error to another host",
        FrameBuilder.icmpError(from: device, to: IPAddress("10.99.1.20")!, quoting: fromGuard),
        nil, "icmp-error-misdirected"
      ),
      (
        "ICMP error padded",
        FrameBuilder.icmpError(
          from: device, to: guardAddress, quoting: fromGuard,
          extra: [UInt8](repeating: 1, count: 64)),
        nil, "icmp-quote-inconsistent"
      ),
      (
        "ARP carrying data",
        FrameBuilder.arp(sender: device, target: IPAddress("10.99.0.1")!) + Array("data".utf8),
        0x0806, "malformed-link-control"
      ),
      (
        "neighbour solicitation carrying data",
        FrameBuilder.ipv6(
          source: IPAddress("fe80::2")!, destination: IPAddress("ff02::1:ff00:1")!,
          proto: IPProtocolNumber.icmpv6, payload: ns + [1, 2, 3], hopLimit: 255), nil,
        "malformed-link-control"
      ),
      (
        "MLD for a routed group",
        FrameBuilder.ipv6(
          source: IPAddress("fe80::2")!, destination: IPAddress("ff02::16")!,
          proto: IPProtocolNumber.icmpv6,
          payload: FrameBuilder.mldv2Report(groups: [IPAddress("ff0e::1")!]),
          extensions: [.hopByHop], hopLimit: 1), nil, "link-control-off-link"
      ),
      (
        "IGMP for a routed group",
        FrameBuilder.ipv4(
          source: device, destination: IPAddress("224.0.0.22")!, proto: IPProtocolNumber.igmp,
          payload: FrameBuilder.igmpv3Report(groups: [IPAddress("239.1.2.3")!]), ttl: 1), nil,
        "link-control-off-link"
      ),
      (
        "probe imitation",
        FrameBuilder.udpPacket(
          from: Self.device, to: Endpoint("10.99.0.1:9")!,
          payload: SyncProbe.defaultPrefix + Array(" data".utf8)), nil, "destination-not-allowed"
      ),
      (
        "source route to the guard",
        FrameBuilder.ipv4(
          source: device, destination: guardAddress, proto: IPProtocolNumber.tcp, payload: syn,
          options: [131, 7, 4, 10, 99, 1, 20]), nil, "ip-options"
      ),
      (
        "routing header",
        FrameBuilder.ipv6(
          source: IPAddress("fd66::2")!, destination: IPAddress("fd66:1::10")!,
          proto: IPProtocolNumber.tcp, payload: syn, extensions: [.routing]), nil,
        "ipv6-routing-header"
      ),
      (
        "fragment inside the TCP header",
        FrameBuilder.ipv4(
          source: device, destination: guardAddress, proto: IPProtocolNumber.tcp,
          payload: [UInt8](repeating: 2, count: 16), id: 5, fragmentOffset: 8), nil,
        "fragment-overlap"
      ),
    ]
    let clean = FrameBuilder.tcpPacket(from: Self.device, to: Self.guardEndpoint, flags: 0x02)
    for (name, packet, etherType, reason) in cases {
      let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "fc-cli-evasion-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
      try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
      defer { try? FileManager.default.removeItem(at: directory) }
      let path = directory.appendingPathComponent("capture.pcap").path
      let writer = try PcapWriter(path: path, linkType: .linuxSLL2)
      writer.write(timestamp: 0, frame: FrameBuilder.frame(.linuxSLL2, ip: clean))
      writer.write(
        timestamp: 1_000_000,
        frame: FrameBuilder.frame(.linuxSLL2, ip: packet, etherType: etherType))
      writer.close()
      let reportDirectory = directory.appendingPathComponent("report").path
      #expect(
        await FailClosedMain.run([
          "audit", path, "--allow", "10.99.1.10:9001", "--allow", "[fd66:1::10]:9001",
          "--report", reportDirectory,
        ]) == 5, "\(name)")
      let data = try Data(contentsOf: URL(fileURLWithPath: reportDirectory + "/audit.json"))
      let report = try JSONDecoder().decode(AuditReport.self, from: data)
      #expect(report.leaks.map(\.reason) == [reason], "\(name)")
      #expect(report.statistics.allowedPackets == 1, "\(name)")
    }
  }

  /// An Ethernet file says nothing of direction without the device's MAC or addresses: the
  /// guard's replies cannot be told from forged packets, so the verdict is inconclusive.
  @Test func anEthernetFileNeedsTheDevicesMACOrAddressesToPass() async throws {
    let syn = FrameBuilder.tcpPacket(from: Self.device, to: Self.guardEndpoint, flags: 0x02)
    let reply = FrameBuilder.tcpPacket(from: Self.guardEndpoint, to: Self.device, flags: 0x12)
    let (directory, path) = try file([(syn, true), (reply, false)], linkType: .ethernet)
    defer { try? FileManager.default.removeItem(at: directory) }
    let allow = ["audit", path, "--allow", "10.99.1.10:9001"]
    #expect(await FailClosedMain.run(allow) == 2)
    #expect(await FailClosedMain.run(allow + ["--device-mac", "02:00:00:00:00:01"]) == 0)
    #expect(await FailClosedMain.run(allow + ["--device", "10.99.0.2"]) == 0)
    #expect(await FailClosedMain.run(allow + ["--device-mac", "02:00:00:00:01"]) == 2)
    // An empty file proves nothing.
    let (emptyDirectory, empty) = try file([], linkType: .ethernet)
    defer { try? FileManager.default.removeItem(at: emptyDirectory) }
    #expect(await FailClosedMain.run(["audit", empty, "--allow", "10.99.1.10:9001"]) == 2)
  }

  @Test func badInputIsASetupError() async throws {
    #expect(await FailClosedMain.run(["audit"]) == 2)
    #expect(await FailClosedMain.run(["audit", "/nonexistent/capture.pcap"]) == 2)
    let clean = try capture(leak: false)
    defer { try? FileManager.default.removeItem(at: clean.directory) }
    #expect(await FailClosedMain.run(["audit", clean.path, "--allow", "10.99.1.10"]) == 2)
    #expect(await FailClosedMain.run(["audit", clean.path, "--allow", "host:80"]) == 2)
    #expect(await FailClosedMain.run(["audit", clean.path, "--sync-probe", "[::1]"]) == 2)
    #expect(await FailClosedMain.run(["audit", clean.path, clean.path]) == 2)
  }

  @Test func helpNamesEveryOptionAndClass() {
    let help = AuditCommand().helpText
    for word in [
      "--allow", "--sync-probe", "--report", "--json", "--device", "--device-mac", "forged",
      "dns", "multicast", "ipv6",
      "other-protocol", "inconclusive",
    ] {
      #expect(help.contains(word), "help lacks \(word)")
    }
    #expect(FailClosedMain.helpText().contains("audit"))
  }
}
