import FailClosedSupport
import Foundation

/// Writes a large classic-pcap capture of mixed traffic for the audit benchmark: Tor-like TCP
/// to one guard (allowed), its ACKs, and every `leakEvery` packets a leak (DNS query, IPv6 UDP,
/// ICMP echo, clear TCP with a TLS SNI), in rotation.
enum PcapGenerator {
  struct Stats: Codable {
    var path: String
    var packets: Int
    var leaks: Int
    var bytes: Int
  }

  static let device: [UInt8] = [10, 66, 0, 2]
  static let guardAddress: [UInt8] = [10, 66, 1, 10]
  static let guardPort: UInt16 = 9001
  static let world: [UInt8] = [10, 66, 1, 80]
  static let resolver: [UInt8] = [10, 66, 1, 53]

  static func write(path: String, packets: Int, leakEvery: Int) throws -> Stats {
    guard let file = fopen(path, "wb") else { throw SystemError("fopen(\(path))") }
    defer { fclose(file) }
    var out: [UInt8] = []
    out.reserveCapacity(8 << 20)
    // Global header: magic, v2.4, tz 0, sigfigs 0, snaplen 65535, DLT_EN10MB.
    out += le32(0xa1b2_c3d4) + le16(2) + le16(4) + le32(0) + le32(0) + le32(65535) + le32(1)
    let torData = tcp(
      from: device, to: guardAddress, sport: 41000, dport: guardPort,
      payload: [0x17, 0x03, 0x03, 0x01, 0x29] + [UInt8](repeating: 0xA5, count: 297))
    let torAck = tcp(from: guardAddress, to: device, sport: guardPort, dport: 41000, payload: [])
    let leaks: [[UInt8]] = [
      udp(from: device, to: resolver, sport: 53000, dport: 53, payload: dnsQuery("leak.example")),
      ipv6UDP(payload: dnsQuery("v6.example")),
      icmpEcho(from: device, to: world),
      tcp(
        from: device, to: world, sport: 42000, dport: 443,
        payload: clientHelloPrefix(sni: "clear.example")),
    ]
    var leaksWritten = 0
    var total = 0
    var seconds: UInt32 = 1_800_000_000
    var micros: UInt32 = 0
    for index in 0..<packets {
      let frame: [UInt8]
      if leakEvery > 0 && index % leakEvery == leakEvery - 1 {
        var leak = leaks[leaksWritten % leaks.count]
        if leaksWritten % leaks.count == 3 {
          // A new source port per clear TLS leak, so tshark sees new connections, not retransmissions.
          let port = 20000 + UInt16(leaksWritten / leaks.count % 40000)
          leak[34] = UInt8(port >> 8)
          leak[35] = UInt8(port & 0xFF)
        }
        frame = leak
        leaksWritten += 1
      } else {
        frame = index % 4 == 3 ? torAck : torData
      }
      micros += 7
      if micros >= 1_000_000 {
        micros -= 1_000_000
        seconds += 1
      }
      out += le32(seconds) + le32(micros) + le32(UInt32(frame.count)) + le32(UInt32(frame.count))
      out += frame
      total += 16 + frame.count
      if out.count > 4 << 20 {
        guard fwrite(out, 1, out.count, file) == out.count else { throw SystemError("fwrite") }
        out.removeAll(keepingCapacity: true)
      }
    }
    guard fwrite(out, 1, out.count, file) == out.count else { throw SystemError("fwrite") }
    return Stats(path: path, packets: packets, leaks: leaksWritten, bytes: total + 24)
  }

  static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
  static func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
  static func be16(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }

  static func ethernet(type: UInt16) -> [UInt8] {
    [0x02, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x02] + be16(type)
  }

  static func ipv4(from: [UInt8], to: [UInt8], proto: UInt8, payload: [UInt8]) -> [UInt8] {
    var header: [UInt8] =
      [0x45, 0] + be16(UInt16(20 + payload.count)) + [0, 1, 0x40, 0, 64, proto, 0, 0]
    header += from + to
    var sum: UInt32 = 0
    for index in stride(from: 0, to: 20, by: 2) {
      sum += UInt32(header[index]) << 8 | UInt32(header[index + 1])
    }
    while sum > 0xFFFF { sum = (sum & 0xFFFF) + (sum >> 16) }
    let checksum = ~UInt16(sum)
    header[10] = UInt8(checksum >> 8)
    header[11] = UInt8(checksum & 0xFF)
    return ethernet(type: 0x0800) + header + payload
  }

  static func tcp(from: [UInt8], to: [UInt8], sport: UInt16, dport: UInt16, payload: [UInt8])
    -> [UInt8]
  {
    let flags: UInt8 = payload.isEmpty ? 0x10 : 0x18
    let segment =
      be16(sport) + be16(dport) + [0, 0, 0, 1, 0, 0, 0, 1, 0x50, flags, 0xFF, 0xFF, 0, 0, 0, 0]
    return ipv4(from: from, to: to, proto: 6, payload: segment + payload)
  }

  static func udp(from: [UInt8], to: [UInt8], sport: UInt16, dport: UInt16, payload: [UInt8])
    -> [UInt8]
  {
    let datagram = be16(sport) + be16(dport) + be16(UInt16(8 + payload.count)) + [0, 0] + payload
    return ipv4(from: from, to: to, proto: 17, payload: datagram)
  }

  static func icmpEcho(from: [UInt8], to: [UInt8]) -> [UInt8] {
    ipv4(from: from, to: to, proto: 1, payload: [8, 0, 0xF7, 0xFD, 0, 1, 0, 1])
  }

  static func ipv6UDP(payload: [UInt8]) -> [UInt8] {
    let source: [UInt8] = [0xFD, 0x66] + [UInt8](repeating: 0, count: 13) + [2]
    let destination: [UInt8] = [0xFD, 0x66, 0, 1] + [UInt8](repeating: 0, count: 11) + [0x53]
    let datagram = be16(53001) + be16(53) + be16(UInt16(8 + payload.count)) + [0, 0] + payload
    let header: [UInt8] = [0x60, 0, 0, 0] + be16(UInt16(datagram.count)) + [17, 64]
    return ethernet(type: 0x86DD) + header + source + destination + datagram
  }

  static func dnsQuery(_ name: String) -> [UInt8] {
    var message: [UInt8] = [0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]
    for label in name.split(separator: ".") {
      message.append(UInt8(label.utf8.count))
      message += Array(label.utf8)
    }
    return message + [0, 0, 1, 0, 1]
  }

  /// A TLS record carrying a ClientHello with only the SNI extension: enough for a decoder.
  static func clientHelloPrefix(sni: String) -> [UInt8] {
    let name = Array(sni.utf8)
    let serverName = [0] + be16(UInt16(name.count)) + name
    let sniExtension =
      be16(0) + be16(UInt16(serverName.count + 2)) + be16(UInt16(serverName.count))
      + serverName
    var hello: [UInt8] = [0x03, 0x03] + [UInt8](repeating: 0x11, count: 32) + [0]
    hello += be16(2) + [0x13, 0x01] + [1, 0]
    hello += be16(UInt16(sniExtension.count)) + sniExtension
    let handshake = [0x01, 0] + be16(UInt16(hello.count)) + hello
    return [0x16, 0x03, 0x01] + be16(UInt16(handshake.count)) + handshake
  }
}
