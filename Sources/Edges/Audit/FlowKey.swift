/// A directional flow: (protocol, source, destination, source port, destination port).
public struct FlowKey: Hashable, Sendable {
  public var proto: UInt8
  public var source: IPAddress
  public var destination: IPAddress
  public var sourcePort: UInt16
  public var destinationPort: UInt16

  public init(
    proto: UInt8, source: IPAddress, destination: IPAddress, sourcePort: UInt16,
    destinationPort: UInt16
  ) {
    self.proto = proto
    self.source = source
    self.destination = destination
    self.sourcePort = sourcePort
    self.destinationPort = destinationPort
  }

  public var reversed: FlowKey {
    FlowKey(
      proto: proto, source: destination, destination: source, sourcePort: destinationPort,
      destinationPort: sourcePort)
  }

  /// A cheap mixing hash for the flow table (the standard Hasher is SipHash, too slow for a
  /// per-packet lookup at millions of packets per second).
  @inline(__always)
  var fastHash: UInt64 {
    var hash = source.low &* 0x9E37_79B9_7F4A_7C15
    hash = (hash ^ destination.low) &* 0xC2B2_AE3D_27D4_EB4F
    hash = (hash ^ source.high ^ (destination.high &<< 1)) &* 0x1656_67B1_9E37_79F9
    hash ^= UInt64(sourcePort) << 24 | UInt64(destinationPort) << 8 | UInt64(proto)
    hash = (hash ^ (hash >> 31)) &* 0x9E37_79B9_7F4A_7C15
    return hash ^ (hash >> 29)
  }
}
