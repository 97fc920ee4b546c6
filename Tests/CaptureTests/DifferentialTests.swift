import Audit
import Capture
import FailClosedSupport
import Foundation
import SyntheticTraffic
import TestSupport
import Testing

/// The decoder's flows and names must equal what tshark reports for the same file.
@Suite struct DifferentialTests {
  static let device = IPAddress("10.77.0.2")!
  static let device6 = IPAddress("fd77::2")!
  static let server = IPAddress("10.77.1.20")!
  static let server6 = IPAddress("fd77:1::20")!

  static func at(_ address: IPAddress, _ port: UInt16) -> Endpoint {
    Endpoint(address: address, port: port)
  }

  /// Mixed traffic over every protocol the decoder reads (no fragments: tshark attributes
  /// later fragments to no ports, the audit to their flow; the unit tests cover those).
  static func packets() -> [[UInt8]] {
    var packets: [[UInt8]] = []
    for index in 0..<20 {
      let port = UInt16(40000 + index)
      packets.append(
        FrameBuilder.tcpPacket(from: at(device, port), to: at(server, 9001), flags: 0x02))
      packets.append(
        FrameBuilder.tcpPacket(
          from: at(server, 9001), to: at(device, port), payload: [0x17, 3, 3, 0, 1, 0]))
    }
    for (index, name) in ["alpha.example", "beta.example.org", "x.y.z.example"].enumerated() {
      packets.append(
        FrameBuilder.udpPacket(
          from: at(device, UInt16(50000 + index)), to: at(server, 53),
          payload: FrameBuilder.dnsQuery(id: UInt16(index), name: name)))
      packets.append(
        FrameBuilder.udpPacket(
          from: at(device6, UInt16(50100 + index)), to: at(server6, 53),
          payload: FrameBuilder.dnsQuery(id: UInt16(index), name: "v6." + name, type: 28)))
    }
    let tcpQuery = FrameBuilder.dnsQuery(name: "tcp.example")
    packets.append(
      FrameBuilder.tcpPacket(
        from: at(device, 50200), to: at(server, 53),
        payload: FrameBuilder.be16(UInt16(tcpQuery.count)) + tcpQuery))
    packets.append(
      FrameBuilder.udpPacket(
        from: at(device, 5353), to: at(IPAddress("224.0.0.251")!, 5353),
        payload: FrameBuilder.dnsQuery(id: 0, name: "printer.local")))
    packets.append(
      FrameBuilder.tcpPacket(
        from: at(device, 50300), to: at(server, 443),
        payload: FrameBuilder.tlsClientHello(serverName: "sni.example")))
    packets.append(
      FrameBuilder.tcpPacket(
        from: at(device, 50301), to: at(server, 80),
        payload: FrameBuilder.httpRequest(host: "host.example")))
    packets.append(
      FrameBuilder.ip(
        source: device, destination: server, proto: IPProtocolNumber.icmp,
        payload: FrameBuilder.icmp(type: 8)))
    packets.append(
      FrameBuilder.ip(
        source: device6, destination: server6, proto: IPProtocolNumber.icmpv6,
        payload: FrameBuilder.icmp(type: 128)))
    packets.append(
      FrameBuilder.ipv6(
        source: device6, destination: server6, proto: IPProtocolNumber.udp,
        payload: FrameBuilder.udp(sourcePort: 50400, destinationPort: 4444, payload: [1, 2]),
        extensions: [.hopByHop, .destinationOptions, .routing]))
    packets.append(
      FrameBuilder.udpPacket(from: at(device, 50401), to: at(server, 4444), payload: [3]))
    return packets
  }

  struct Flow: Hashable, CustomStringConvertible {
    var proto: String
    var source: String
    var destination: String
    var sourcePort: String
    var destinationPort: String
    var description: String {
      "\(proto) \(source):\(sourcePort) > \(destination):\(destinationPort)"
    }
  }

  /// tshark is the peer (tools/install-deps --test installs it): without it the test skips
  /// locally, saying so, and fails under CI=1.
  static var tsharkInstalled: Bool {
    (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":").contains {
      FileManager.default.isExecutableFile(atPath: "\($0)/tshark")
    }
  }

  @Test(
    .needs("needs tshark (tools/install-deps --test)", if: DifferentialTests.tsharkInstalled),
    arguments: [LinkType.ethernet, .linuxSLL, .linuxSLL2, .raw])
  func flowsAndNamesMatchTshark(linkType: LinkType) throws {
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("fc-diff-\(getpid())-\(linkType.rawValue).pcap").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    let writer = try PcapWriter(path: path, linkType: linkType)
    for (index, packet) in Self.packets().enumerated() {
      writer.write(
        timestamp: 1_700_000_000_000_000_000 + Int64(index) * 1000,
        frame: FrameBuilder.frame(linkType, ip: packet))
    }
    writer.close()

    // Everything denied, so every packet's names are read.
    let report = try PcapFileReader.audit(path: path, policy: AuditPolicy())
    var ours: [Flow: Int] = [:]
    for flow in report.flows {
      let proto = flow.protocol == "icmpv6" ? "icmp" : flow.protocol
      let ported = proto == "tcp" || proto == "udp"
      ours[
        Flow(
          proto: proto, source: flow.source, destination: flow.destination,
          sourcePort: ported ? "\(flow.sourcePort)" : "",
          destinationPort: ported ? "\(flow.destinationPort)" : ""), default: 0] += flow.packets
    }
    let ourNames = Set(report.flows.flatMap(\.names))

    let fields = [
      "ip.src", "ip.dst", "ipv6.src", "ipv6.dst", "tcp.srcport", "tcp.dstport", "udp.srcport",
      "udp.dstport", "icmp.type", "icmpv6.type", "dns.qry.name",
      "tls.handshake.extensions_server_name", "http.host",
    ]
    let output = try Spawner.capture(
      ["tshark", "-r", path, "-T", "fields", "-E", "separator=;", "-E", "occurrence=f"]
        + fields.flatMap { ["-e", $0] }
    ).stdout
    var theirs: [Flow: Int] = [:]
    var theirNames = Set<String>()
    for line in output.split(separator: "\n", omittingEmptySubsequences: true) {
      let value = line.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
      guard value.count == fields.count else { continue }
      let source = value[0].isEmpty ? value[2] : value[0]
      let destination = value[1].isEmpty ? value[3] : value[1]
      let flow: Flow
      if !value[4].isEmpty {
        flow = Flow(
          proto: "tcp", source: source, destination: destination, sourcePort: value[4],
          destinationPort: value[5])
      } else if !value[6].isEmpty {
        flow = Flow(
          proto: "udp", source: source, destination: destination, sourcePort: value[6],
          destinationPort: value[7])
      } else {
        #expect(!value[8].isEmpty || !value[9].isEmpty, "unexpected tshark line \(line)")
        flow = Flow(
          proto: "icmp", source: source, destination: destination, sourcePort: "",
          destinationPort: "")
      }
      theirs[flow, default: 0] += 1
      for name in value[10...] where !name.isEmpty { theirNames.insert(name) }
    }
    #expect(theirs.count == 54)
    #expect(ours == theirs)
    #expect(ourNames == theirNames)
  }
}
