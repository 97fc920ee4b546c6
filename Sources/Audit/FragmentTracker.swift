/// Remembers the ports of recent first fragments so later fragments (which carry no transport
/// header) are attributed to their flow by (source, destination, id, protocol). A fixed
/// direct-mapped table: constant memory, no allocation per packet; a collision forgets the
/// older datagram, whose later fragments then count with ports 0.
struct FragmentTracker {
  private struct Slot {
    var source = IPAddress.zero
    var destination = IPAddress.zero
    var id: UInt32 = 0
    var proto: UInt8 = 0
    var used = false
    var sourcePort: UInt16 = 0
    var destinationPort: UInt16 = 0
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
    if !packet.isLaterFragment {
      slots[index] = Slot(
        source: packet.source, destination: packet.destination, id: packet.fragmentID,
        proto: packet.ipProtocol, used: true, sourcePort: packet.sourcePort,
        destinationPort: packet.destinationPort)
      return
    }
    let slot = slots[index]
    if slot.used && slot.id == packet.fragmentID && slot.source == packet.source
      && slot.destination == packet.destination && slot.proto == packet.ipProtocol
    {
      packet.sourcePort = slot.sourcePort
      packet.destinationPort = slot.destinationPort
      packet.hasPorts = slot.sourcePort != 0 || slot.destinationPort != 0
    }
  }
}
