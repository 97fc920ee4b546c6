/// Remembers the ports of recent first fragments so later fragments (which carry no transport
/// header) are attributed to their flow by (source, destination, id, protocol). A fixed
/// direct-mapped table: constant memory, no allocation per packet; a collision forgets the
/// older datagram, whose later fragments then count with ports 0.
///
/// It also catches pieces that disagree (RFC 1858, RFC 5722): a later fragment that starts
/// inside the first fragment's bytes (it would rewrite the transport header or data the
/// policy judged), and a second first fragment with other ports. Receivers reassemble such
/// datagrams differently, so the audit cannot say where they go: it marks them.
struct FragmentTracker {
  private struct Slot {
    var source = IPAddress.zero
    var destination = IPAddress.zero
    var id: UInt32 = 0
    var proto: UInt8 = 0
    var used = false
    var sourcePort: UInt16 = 0
    var destinationPort: UInt16 = 0
    /// Bytes the first fragment covers, from the start of the fragmentable part.
    var firstLength = 0
  }

  private static let size = 4096
  private var slots = [Slot](repeating: Slot(), count: FragmentTracker.size)

  @inline(__always)
  private static func index(_ packet: DecodedPacket) -> Int {
    var hash = packet.source.low &* 0x9E37_79B9_7F4A_7C15
    hash ^= packet.destination.low &+ UInt64(packet.fragmentID) &* 0xC2B2_AE3D_27D4_EB4F
    hash ^= packet.source.high ^ (packet.destination.high << 1) ^ UInt64(packet.ipProtocol)
    hash ^= hash >> 29
    return Int(truncatingIfNeeded: hash & UInt64(size - 1))
  }

  /// Records a first fragment's ports, or fills a later fragment's ports from its first.
  mutating func resolve(_ packet: inout DecodedPacket) {
    guard packet.isFragment else { return }
    let index = Self.index(packet)
    let slot = slots[index]
    let sameDatagram =
      slot.used && slot.id == packet.fragmentID && slot.source == packet.source
      && slot.destination == packet.destination && slot.proto == packet.ipProtocol
    if !packet.isLaterFragment {
      if sameDatagram
        && (slot.sourcePort != packet.sourcePort || slot.destinationPort != packet.destinationPort)
      {
        packet.anomalies.insert(.fragmentOverlap)
      }
      let headers = packet.transportOffset - packet.networkOffset
      slots[index] = Slot(
        source: packet.source, destination: packet.destination, id: packet.fragmentID,
        proto: packet.ipProtocol, used: true, sourcePort: packet.sourcePort,
        destinationPort: packet.destinationPort,
        firstLength: max(0, packet.ipTotalLength - headers))
      return
    }
    if sameDatagram {
      packet.sourcePort = slot.sourcePort
      packet.destinationPort = slot.destinationPort
      packet.hasPorts = slot.sourcePort != 0 || slot.destinationPort != 0
      if packet.fragmentOffset < slot.firstLength { packet.anomalies.insert(.fragmentOverlap) }
    } else if packet.fragmentOffset < Self.minimumTransportHeader(packet.ipProtocol) {
      packet.anomalies.insert(.fragmentOverlap)
    }
  }

  /// The smallest transport header a later fragment must start beyond.
  static func minimumTransportHeader(_ proto: UInt8) -> Int {
    proto == IPProtocolNumber.tcp ? 20 : 8
  }
}
