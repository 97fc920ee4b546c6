import Audit
import FailClosedSupport
import Foundation
import TestSupport
import Testing

@testable import Sandbox

/// Issue 28's three false passes made for real in the device, by a root program: a DNS query
/// over UDP to the guard's ORPort, clear HTTP over the kernel's own TCP straight to the guard,
/// ICMP echo to the guard's address, an MLD report whose hop-by-hop PadN carries
/// "EXFILDAT", neighbour discovery with a header it does not need, and a SYN to the guard
/// with bytes after its datagram in the frame. Each must be caught from the cooked capture with its class and reason. The
/// control: the same program opening the guard with the mock Tor's own tunnel request, and
/// an MLD report with Linux's router alert and zero padding, must pass.
@Suite("Tor endpoint canaries in the device")
struct TorEndpointCanaryTests {
  static let script = """
    import socket, struct, sys
    link = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    link.bind(('eth0', 0))
    mac = bytes.fromhex(open('/sys/class/net/eth0/address').read().strip().replace(':', ''))
    def mld(options):
        group = socket.inet_pton(socket.AF_INET6, 'ff02::1:ff00:2')
        body = bytes([143, 0, 0, 0, 0, 0, 0, 1, 4, 0, 0, 0]) + group
        hbh = bytes([58, (len(options) + 2) // 8 - 1]) + options
        payload = hbh + body
        header = struct.pack('!IHBB', 0x60000000, len(payload), 0, 1)
        header += socket.inet_pton(socket.AF_INET6, 'fe80::2')
        header += socket.inet_pton(socket.AF_INET6, 'ff02::16')
        link.send(b'\\x33\\x33\\x00\\x00\\x00\\x16' + mac + b'\\x86\\xdd' + header + payload)
    guard = ('10.66.1.10', 9001)
    if sys.argv[1] == 'canaries':
        query = b'\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00'
        query += b'\\x06secret\\x07example\\x00\\x00\\x01\\x00\\x01'
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(query, guard)
        tcp = socket.create_connection(guard, timeout=5)
        tcp.sendall(b'GET http://clear.example/secret HTTP/1.1\\r\\nHost: clear.example\\r\\n\\r\\n')
        tcp.recv(16)
        tcp.close()
        icmp = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
        icmp.sendto(b'\\x08\\x00\\xf7\\xff\\x00\\x00\\x00\\x00', ('10.66.1.10', 0))
        mld(bytes([5, 2, 0, 0, 1, 8]) + b'EXFILDAT' + bytes([1, 0]))
        # Neighbour solicitation with a destination options header it does not need.
        target = socket.inet_pton(socket.AF_INET6, 'fd66::1')
        ns = bytes([135, 0, 0, 0, 0, 0, 0, 0]) + target
        dst = bytes([58, 0, 1, 4, 0, 0, 0, 0])
        header = struct.pack('!IHBB', 0x60000000, len(dst + ns), 60, 255)
        header += socket.inet_pton(socket.AF_INET6, 'fe80::2')
        header += socket.inet_pton(socket.AF_INET6, 'ff02::1:ff00:1')
        link.send(b'\\x33\\x33\\xff\\x00\\x00\\x01' + mac + b'\\x86\\xdd' + header + dst + ns)
        # A SYN to the guard with bytes after its IP datagram, in the same frame.
        syn = struct.pack('!HHIIBBHHH', 41009, 9001, 1, 0, 0x50, 0x02, 65535, 0, 0)
        ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 40, 7, 0, 64, 6, 0,
                         socket.inet_aton('10.66.0.2'), socket.inet_aton('10.66.1.10'))
        link.send(b'\\xff' * 6 + mac + b'\\x08\\x00' + ip + syn + b'SECRET-AFTER-THE-PACKET')
    else:
        tcp = socket.create_connection(guard, timeout=5)
        host = b'10.66.1.80'
        tcp.sendall(b'FCT1' + bytes([len(host)]) + host + struct.pack('!H', 80))
        assert tcp.recv(1) == b'\\x00'
        tcp.sendall(b'GET / HTTP/1.0\\r\\n\\r\\n')
        tcp.recv(64)
        tcp.close()
        mld(bytes([5, 2, 0, 0, 1, 0]))
    """

  static func run(_ mode: String) async throws -> AuditReport {
    try await EvasionCanaryTests.run(script: script, mode)
  }

  @Test(.needsRoot)
  func eachFalsePassOfRoundTwoIsCaughtFromTheCapture() async throws {
    let report = try await Self.run("canaries")
    let text = AuditSummary.text(report)
    #expect(report.verdict == .leak, "\(text)")
    let udp = report.leaks.first { $0.protocol == "udp" && $0.destination == "10.66.1.10:9001" }
    #expect(udp?.leakClass == .dns, "\(text)")
    #expect(udp?.reason == "protocol-not-allowed")
    #expect(udp?.names == ["secret.example"])
    let clear = report.leaks.first { $0.leakClass == .clearOnTorEndpoint }
    #expect(clear?.destination == "10.66.1.10:9001", "\(text)")
    #expect(clear?.evidence?.contains("GET http://clear.example/secret") == true, "\(text)")
    #expect(clear?.names == ["clear.example"])
    #expect(
      report.leaks.contains { $0.protocol == "icmp" && $0.reason == "protocol-not-allowed" },
      "\(text)")
    let mld = report.leaks.first { $0.reason == "ipv6-extension-options" }
    #expect(mld?.evidence?.contains("EXFILDAT") == true, "\(text)")
    #expect(
      report.leaks.contains { $0.protocol == "icmpv6" && $0.reason == "header-not-needed" },
      "\(text)")
    let trailing = report.leaks.first { $0.reason == "trailing-data" }
    #expect(trailing?.evidence?.contains("SECRET-AFTER-THE-PACKET") == true, "\(text)")
  }

  @Test(.needsRoot)
  func theMockTorsOwnTunnelRequestAndLinuxsMLDPass() async throws {
    let report = try await Self.run("control")
    #expect(report.verdict == .pass, "\(AuditSummary.text(report))")
    #expect(report.statistics.allowedPackets >= 3)
    #expect(report.linkControl.mld >= 1)
  }
}
