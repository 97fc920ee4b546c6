import Audit

/// Mixed synthetic traffic for benchmarks and soak tests: Tor-like TLS over TCP to a few
/// guards (IPv4 and IPv6, cells and acks, both directions), link control, and one leak every
/// `leakEvery` packets rotating through every leak class. Deterministic for a given seed.
/// Each of the 256 connections per guard opens as tor's do (a SYN, then a ClientHello in its
/// sequence), and its cells follow in sequence, so the audit's content check follows every
/// one from its first byte. Frames are templates patched in place, so generating costs
/// little next to writing.
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
  /// Per guard, three templates leaving (SYN, ClientHello, cell) and what each connection sent.
  private var openings: [[[UInt8]]] = []
  private var nextSequence: [UInt32] = []
  private var stage: [UInt8] = []
  private static let connectionsPerGuard = 256
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
      openings.append([
        frame(FrameBuilder.tcpPacket(from: client, to: guardEndpoint, flags: 0x02)),
        frame(
          FrameBuilder.tcpPacket(
            from: client, to: guardEndpoint,
            payload: FrameBuilder.tlsClientHello(serverName: "www.tor\(guardEndpoint.port).net"))),
      ])
    }
    let connections = Self.guards.count * Self.connectionsPerGuard
    nextSequence = (0..<connections).map { UInt32(truncatingIfNeeded: $0 &* 2_654_435_761) }
    stage = [UInt8](repeating: 0, count: connections)
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
      // Clear HTTP to a guard, in the SYN itself (TCP Fast Open): clear-on-tor-endpoint.
      FrameBuilder.tcpPacket(
        from: Endpoint(address: Self.device, port: 39999), to: Self.guards[0], flags: 0x02,
        payload: FrameBuilder.httpRequest(host: "clear.example")),
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
    let connection = Int(UInt16(truncatingIfNeeded: random >> 24) % 256)
    let isOutbound = kind & 1 == 0
    let port = UInt16(40000 + connection)
    // Every template of one guard has the same headers: one offset serves them all.
    let offset = transportOffset(templates[templateIndex]) ?? 0
    if !isOutbound {
      return Self.patch(&templates[templateIndex], offset, port: port, source: false, 1, body)
    }
    // What the device sends next on this connection: its SYN, its ClientHello, then cells
    // (and acks) in sequence.
    let slot = guardIndex * Self.connectionsPerGuard + connection
    let sequence = nextSequence[slot]
    switch stage[slot] {
    case 0:
      stage[slot] = 1
      nextSequence[slot] = sequence &+ 1
      return Self.patch(&openings[guardIndex][0], offset, port: port, source: true, sequence, body)
    case 1:
      stage[slot] = 2
      nextSequence[slot] = sequence &+ UInt32(openings[guardIndex][1].count - offset - 20)
      return Self.patch(&openings[guardIndex][1], offset, port: port, source: true, sequence, body)
    default:
      nextSequence[slot] = sequence &+ UInt32(templates[templateIndex].count - offset - 20)
      return Self.patch(&templates[templateIndex], offset, port: port, source: true, sequence, body)
    }
  }

  /// Writes a connection's port and sequence number into a template at its TCP header.
  private static func patch<R>(
    _ template: inout [UInt8], _ offset: Int, port: UInt16, source: Bool, _ sequence: UInt32,
    _ body: (UnsafeRawBufferPointer) -> R
  ) -> R {
    template.withUnsafeMutableBytes { frame in
      frame[offset + (source ? 0 : 2)] = UInt8(port >> 8)
      frame[offset + (source ? 1 : 3)] = UInt8(truncatingIfNeeded: port)
      frame.storeBytes(of: sequence.bigEndian, toByteOffset: offset + 4, as: UInt32.self)
      return body(UnsafeRawBufferPointer(frame))
    }
  }
}
