import Audit
import FailClosedSupport
import Foundation
import TestSupport
import Testing

@testable import Sandbox

/// Issue 11's evasions made for real: a root program in the device writes raw packets that
/// try to pass the audit (a forged guard source, an ICMP error quoting the guard's flow sent
/// elsewhere with data, a source-routed SYN to the guard, ARP with data in its padding, a
/// probe imitation, an IPv6 routing header, neighbour discovery with data, MLD and IGMP for
/// routed groups, fragments that overlap the TCP header). Each must be caught from the cooked capture, with its reason; the same
/// raw socket sending a well-formed SYN to the guard and a plain ARP request must pass.
@Suite("Evasion canaries in the device")
struct EvasionCanaryTests {
  /// Builds and sends raw frames; `mode` picks the canaries or the control.
  static let script = """
    import socket, struct, sys
    def csum(b):
        if len(b) % 2: b += b'\\0'
        s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
        s = (s >> 16) + (s & 0xffff); s += s >> 16
        return (~s) & 0xffff
    def ip(src, dst, proto, payload, options=b''):
        hl = 20 + len(options)
        h = struct.pack('!BBHHHBBH4s4s', 0x40 | (hl // 4), 0, hl + len(payload), 7, 0, 64, proto,
                        0, socket.inet_aton(src), socket.inet_aton(dst)) + options
        return h[:10] + struct.pack('!H', csum(h)) + h[12:] + payload
    def udp(sp, dp, data): return struct.pack('!HHHH', sp, dp, 8 + len(data), 0) + data
    def tcp(sp, dp, flags): return struct.pack('!HHIIBBHHH', sp, dp, 1, 0, 0x50, flags, 65535, 0, 0)
    def icmp_error(quoted, extra):
        body = struct.pack('!BBHI', 3, 3, 0, 0) + quoted + extra
        return body[:2] + struct.pack('!H', csum(body)) + body[4:]
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    link = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    link.bind(('eth0', 0))
    mac = bytes.fromhex(open('/sys/class/net/eth0/address').read().strip().replace(':', ''))
    def arp(extra):
        body = struct.pack('!HHBBH', 1, 0x0800, 6, 4, 1) + mac + socket.inet_aton('10.66.0.2')
        body += b'\\0' * 6 + socket.inet_aton('10.66.0.1')
        link.send(b'\\xff' * 6 + mac + b'\\x08\\x06' + body + extra)
    query = b'\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00' + b'\\x06forged\\x07example\\x00\\x00\\x01\\x00\\x01'
    if sys.argv[1] == 'canaries':
        raw.sendto(ip('10.66.1.10', '10.66.1.53', 17, udp(9001, 53, query)), ('10.66.1.53', 0))
        quoted = ip('10.66.1.10', '10.66.0.2', 6, tcp(9001, 41000, 0x12))
        raw.sendto(ip('10.66.0.2', '10.66.1.80', 1, icmp_error(quoted, b'A' * 200)), ('10.66.1.80', 0))
        lsrr = bytes([131, 7, 4]) + socket.inet_aton('10.66.1.80') + b'\\0'
        raw.sendto(ip('10.66.0.2', '10.66.1.10', 6, tcp(41000, 9001, 0x02), lsrr), ('10.66.1.10', 0))
        arp(b'secret data in the padding')
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.sendto(b'failclosed-sync-probe secret', ('10.66.0.1', 9))
        def frame(ethertype, payload): link.send(b'\\xff' * 6 + mac + ethertype + payload)
        def ip6(src, dst, nxt, payload, hops=64):
            return struct.pack('!IHBB', 0x60000000, len(payload), nxt, hops) + \\
                socket.inet_pton(socket.AF_INET6, src) + socket.inet_pton(socket.AF_INET6, dst) + payload
        routing = bytes([6, 0, 0, 0, 0, 0, 0, 0])
        frame(b'\\x86\\xdd', ip6('fd66::2', 'fd66:0:0:2::80', 43, routing + tcp(41002, 443, 0x02)))
        ns = bytes([135, 0, 0, 0, 0, 0, 0, 0]) + socket.inet_pton(socket.AF_INET6, 'fd66::1')
        frame(b'\\x86\\xdd', ip6('fe80::2', 'ff02::1:ff00:1', 58, ns + b'hidden data!', 255))
        hbh = bytes([58, 0, 5, 2, 0, 0, 1, 0])
        mld = bytes([143, 0, 0, 0, 0, 0, 0, 1, 4, 0, 0, 0]) + socket.inet_pton(socket.AF_INET6, 'ff0e::1:2:3')
        frame(b'\\x86\\xdd', ip6('fe80::2', 'ff02::16', 0, hbh + mld, 1))
        igmp = bytes([0x22, 0, 0, 0, 0, 0, 0, 1, 4, 0, 0, 0]) + socket.inet_aton('239.1.2.3')
        h = ip('10.66.0.2', '224.0.0.22', 2, igmp, bytes([148, 4, 0, 0]))
        frame(b'\\x08\\x00', h[:8] + bytes([1]) + h[9:])
        first = tcp(41003, 9001, 0x18) + b'x' * 20
        def fragment(payload, offset, more):
            h = ip('10.66.0.2', '10.66.1.10', 6, payload)
            flags = (0x2000 if more else 0) | (offset // 8)
            return h[:4] + struct.pack('!HH', 99, flags) + h[8:]
        frame(b'\\x08\\x00', fragment(first, 0, True))
        frame(b'\\x08\\x00', fragment(b'y' * 16, 8, False))
    else:
        raw.sendto(ip('10.66.0.2', '10.66.1.10', 6, tcp(41001, 9001, 0x02)), ('10.66.1.10', 0))
        arp(b'')
    """

  static func run(_ mode: String) async throws -> AuditReport {
    try await run(script: script, mode)
  }

  /// Runs a Python `script` with `mode` as its argument in a fresh sandbox without Tor, and
  /// returns the audit of what the device sent.
  static func run(script: String, _ mode: String) async throws -> AuditReport {
    let result = try await SandboxExec.run(
      SandboxExec.Options(
        command: ["python3", "-c", script, mode], tor: false, grace: 0.3, timeout: 20,
        commandOutput: "/dev/null"))
    #expect(result.commandStatus == 0, "the raw-packet script failed")
    return result.report
  }

  @Test(.needsRoot)
  func rawEvasionsFromTheDeviceAreCaughtWithTheirReasons() async throws {
    let report = try await Self.run("canaries")
    let text = AuditSummary.text(report)
    #expect(report.verdict == .leak, "\(text)")
    let reasons = Set(report.leaks.compactMap(\.reason))
    #expect(
      reasons.isSuperset(of: [
        "forged-source", "ip-options", "malformed-link-control", "link-control-off-link",
        "ipv6-routing-header", "fragment-overlap",
      ]), "\(text)")
    // Neighbour discovery with data, MLD and IGMP for routed groups: each its own leak.
    #expect(
      report.leaks.contains { $0.protocol == "icmpv6" && $0.reason == "malformed-link-control" })
    #expect(report.leaks.filter { $0.reason == "link-control-off-link" }.count >= 2, "\(text)")
    let forged = report.leaks.first { $0.reason == "forged-source" }
    #expect(forged?.leakClass == .dns)
    #expect(forged?.direction == "outbound")
    #expect(forged?.sources == ["10.66.1.10:9001"])
    #expect(forged?.names == ["forged.example"])
    let error = report.leaks.first { $0.leakClass == .icmp }
    #expect(
      error?.reason == "icmp-quote-inconsistent" || error?.reason == "icmp-error-misdirected",
      "\(text)")
    #expect(error?.evidence?.contains("10.66.1.10:9001") == true, "\(text)")
    #expect(error?.destination == "10.66.1.80")
    #expect(report.leaks.contains { $0.leakClass == .udp && $0.destination == "10.66.0.1:9" })
  }

  @Test(.needsRoot)
  func theSameRawSocketsSendingWellFormedTrafficPass() async throws {
    let report = try await Self.run("control")
    #expect(report.verdict == .pass, "\(AuditSummary.text(report))")
    #expect(report.statistics.allowedPackets >= 1)
    #expect(report.linkControl.arp >= 1)
  }
}
