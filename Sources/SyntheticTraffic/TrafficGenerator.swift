import Audit

/// Mixed synthetic traffic for benchmarks and soak tests: Tor-like TLS over TCP to a few
/// guards (IPv4 and IPv6, cells and acks, both directions), link control, and one leak every
/// `leakEvery` packets rotating through every leak class. Deterministic for a given seed.
/// Frames are templates patched in place, so generating costs little next to writing.
public struct TrafficGenerator {
  public static let device = IPAddress("10.200.0.2")!
  public static let device6 = IPAddress("fd00:200::2")!
  /// The allowed endpoints: pass these to the audit (`--allow`) to judge the Tor traffic.
  public static let guards: [Endpoint] = [
    Endpoint("10.200.1.10:9001")!, Endpoint("10.200.1.11:443")!, Endpoint("[fd00:200:1::12]:9001")!,
  ]
  static let world = IPAddress("10.200.1.20")!
  static let world6 = IPAddress("fd00:200:1::20")!

  public let linkType: LinkType
  public let leakEvery: Int
  private var state: UInt64
  private var templates: [[UInt8]] = []
  private var leakTemplates: [[UInt8]] = []
  private var linkControl: [[UInt8]] = []
  private var sequence: UInt32 = 1
  private var leakIndex = 0

  public init(linkType: LinkType = .ethernet, leakEvery: Int = 1000, seed: UInt64 = 1) {
    self.linkType = linkType
    self.leakEvery = max(1, leakEvery)
    self.state = seed | 1
    let cell = [0x17, 0x03, 0x03, 0x02, 0x1A] + [UInt8](repeating: 0x5A, count: 538)
    for guardEndpoint in Self.guards {
      let device = guardEndpoint.address.isIPv6 ? Self.device6 : Self.device
      let client = Endpoint(address: device, port: 40000)
      templates.append(
        frame(FrameBuilder.tcpPacket(from: client, to: guardEndpoint, payload: cell)))
      templates.append(
        frame(FrameBuilder.tcpPacket(from: guardEndpoint, to: client, payload: cell), out: false))
      templates.append(frame(FrameBuilder.tcpPacket(from: client, to: guardEndpoint, flags: 0x10)))
      templates.append(
        frame(FrameBuilder.tcpPacket(from: guardEndpoint, to: client, flags: 0x10), out: false))
    }
    let from = Endpoint(address: Self.device, port: 40000)
    let from6 = Endpoint(address: Self.device6, port: 40000)
    leakTemplates = [
      FrameBuilder.udpPacket(
        from: from, to: Endpoint(address: Self.world, port: 53),
        payload: FrameBuilder.dnsQuery(name: "leak.example")),
      FrameBuilder.tcpPacket(
        from: from, to: Endpoint(address: Self.world, port: 443), flags: 0x02),
      FrameBuilder.udpPacket(
        from: from, to: Endpoint(address: Self.world, port: 4444), payload: [1, 2, 3]),
      FrameBuilder.ip(
        source: Self.device, destination: Self.world, proto: IPProtocolNumber.icmp,
        payload: FrameBuilder.icmp(type: 8)),
      FrameBuilder.udpPacket(
        from: from6, to: Endpoint(address: Self.world6, port: 4444), payload: [1]),
      FrameBuilder.udpPacket(
        from: Endpoint(address: Self.device, port: 5353),
        to: Endpoint(address: IPAddress("224.0.0.251")!, port: 5353),
        payload: FrameBuilder.dnsQuery(name: "printer.local")),
      FrameBuilder.tcpPacket(
        from: from, to: Endpoint(address: Self.world, port: 853), flags: 0x02),
      FrameBuilder.udpPacket(
        from: from, to: Endpoint(address: IPAddress("239.255.255.250")!, port: 1900),
        payload: Array("M-SEARCH * HTTP/1.1\r\n".utf8)),
      FrameBuilder.ip(
        source: Self.device, destination: Self.world, proto: 47, payload: [0, 0, 8, 0]),
    ].map { frame($0) }
    linkControl = [
      frame(
        FrameBuilder.ip(
          source: IPAddress("fe80::2")!, destination: IPAddress("ff02::1:ff00:1")!,
          proto: IPProtocolNumber.icmpv6,
          payload: FrameBuilder.neighbourSolicitation(target: IPAddress("fe80::1")!),
          hopLimit: 255)),
      FrameBuilder.frame(
        linkType, ip: FrameBuilder.arp(sender: Self.device, target: IPAddress("10.200.0.1")!),
        etherType: 0x0806),
    ]
  }

  /// A frame the device sent (`out`) or received: in Ethernet files the source MAC says
  /// which (the device's is ``FrameBuilder/deviceMAC``), in cooked ones the packet type.
  private func frame(_ packet: [UInt8], out: Bool = true) -> [UInt8] {
    FrameBuilder.frame(linkType, ip: packet, outbound: out)
  }

  /// The byte offset of the transport header in a template frame (ports live there).
  private func transportOffset(_ frame: [UInt8]) -> Int? {
    let linkLength: Int
    switch linkType {
    case .ethernet: linkLength = 14
    case .linuxSLL: linkLength = 16
    case .linuxSLL2: linkLength = 20
    case .null, .loop: linkLength = 4
    case .raw, .rawDLT, .rawOpenBSD, .ipv4, .ipv6: linkLength = 0
    }
    guard frame.count > linkLength else { return nil }
    return linkLength + (frame[linkLength] >> 4 == 6 ? 40 : 20)
  }

  private mutating func next() -> UInt64 {
    state ^= state << 13
    state ^= state >> 7
    state ^= state << 17
    return state
  }

  /// Produces packet number `index` (leaks every `leakEvery`, link control every 997) and
  /// hands its bytes to `body`.
  public mutating func packet<R>(_ index: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
    if index % leakEvery == leakEvery - 1 {
      let template = leakTemplates[leakIndex % leakTemplates.count]
      leakIndex += 1
      return template.withUnsafeBytes(body)
    }
    if index % 997 == 996 {
      return linkControl[index % linkControl.count].withUnsafeBytes(body)
    }
    let random = next()
    // Mostly IPv4 guards; one connection in 8 is IPv6.
    let guardIndex = random & 7 == 0 ? 2 : Int(random >> 8 & 1)
    let kind = Int(random >> 16 & 3)
    let templateIndex = guardIndex * 4 + kind
    let connection = UInt16(truncatingIfNeeded: random >> 24) % 256
    sequence &+= 543
    let isOutbound = kind & 1 == 0
    let offset = transportOffset(templates[templateIndex]) ?? 0
    return templates[templateIndex].withUnsafeMutableBytes { frame in
      let port = 40000 + connection
      frame[offset + (isOutbound ? 0 : 2)] = UInt8(port >> 8)
      frame[offset + (isOutbound ? 1 : 3)] = UInt8(truncatingIfNeeded: port)
      frame.storeBytes(of: sequence.bigEndian, toByteOffset: offset + 4, as: UInt32.self)
      return body(UnsafeRawBufferPointer(frame))
    }
  }
}
