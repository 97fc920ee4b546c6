extension PacketDecoder {
  /// A sentence on what a leak's IPv4 options, IPv6 extension headers or trailing bytes
  /// carry: the first option that is not padding or an MLD router alert (with its data), the
  /// bytes after the message, or the headers an exempt packet did not need. Leaks only: it
  /// walks the headers again and allocates.
  static func describeExtras(_ packet: DecodedPacket, _ frame: UnsafeRawBufferPointer) -> String? {
    var parts: [String] = []
    if packet.anomalies.contains(.extensionOptionData), packet.network == .ipv6,
      let text = describeIPv6Options(frame, packet)
    {
      parts.append(text)
    }
    if packet.anomalies.contains(.trailingData) {
      let datagramEnd = packet.networkOffset + packet.ipTotalLength
      if frame.count > datagramEnd && datagramEnd > packet.networkOffset {
        let rest = UnsafeRawBufferPointer(rebasing: frame[datagramEnd...])
        parts.append(
          "\(rest.count) bytes after the IP datagram's \(packet.ipTotalLength): "
            + ClearProtocolRecogniser.preview(rest))
      } else if packet.ipProtocol == IPProtocolNumber.udp {
        let udpEnd = packet.payloadOffset + packet.payloadLength
        let rest = UnsafeRawBufferPointer(rebasing: frame[udpEnd..<packet.networkEnd])
        parts.append(
          "\(rest.count) bytes inside the IP packet after its UDP datagram: "
            + ClearProtocolRecogniser.preview(rest))
      }
    }
    if packet.anomalies.contains(.tcpOptionData), packet.ipProtocol == IPProtocolNumber.tcp,
      frame.count >= packet.transportOffset + 20
    {
      let optionsEnd = min(
        frame.count, packet.transportOffset + Int(frame.u8(packet.transportOffset + 12) >> 4) * 4)
      let options = UnsafeRawBufferPointer(
        rebasing: frame[
          (packet.transportOffset + 20)..<max(packet.transportOffset + 20, optionsEnd)])
      parts.append(
        "TCP options \(ClearProtocolRecogniser.preview(options)) carry more than TCP needs")
    }
    var extras: [String] = []
    let names: [(NetworkExtras, String)] = [
      (.routerAlert, "router alert"), (.otherIPv4Option, "an IPv4 option"),
      (.hopByHop, "a hop-by-hop header"), (.destinationOptions, "a destination options header"),
      (.routing, "a routing header"), (.fragmentHeader, "a fragment header"),
      (.otherExtensionHeader, "another extension header"),
    ]
    for (extra, name) in names where packet.networkExtras.contains(extra) { extras.append(name) }
    if !extras.isEmpty && parts.isEmpty {
      parts.append("carries " + extras.joined(separator: ", "))
    }
    return parts.isEmpty ? nil : parts.joined(separator: "; ")
  }

  /// The first hop-by-hop or destination option that is more than padding or a router alert.
  private static func describeIPv6Options(
    _ frame: UnsafeRawBufferPointer, _ packet: DecodedPacket
  ) -> String? {
    var next = frame.u8(packet.networkOffset + 6)
    var offset = packet.networkOffset + 40
    let end = packet.networkEnd
    for _ in 0..<16 {
      guard [0, 43, 60, 135, 139, 140].contains(next), end >= offset + 8 else { return nil }
      let length = (Int(frame.u8(offset + 1)) + 1) * 8
      if next == 0 || next == 60 {
        let walk = IPv6OptionsWalk(
          frame, offset + 2, min(end, offset + length), hopByHop: next == 0)
        if let problem = walk.problem {
          return IPv6OptionsWalk.describe(
            problem, in: frame, header: next == 0 ? "hop-by-hop" : "destination options")
        }
      }
      next = frame.u8(offset)
      offset += length
    }
    return nil
  }
}
