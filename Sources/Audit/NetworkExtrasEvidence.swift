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
      guard next == 0 || next == 60 || next == 43 || next == 135 || next == 139 || next == 140,
        end >= offset + 8
      else { return nil }
      let length = (Int(frame.u8(offset + 1)) + 1) * 8
      let headerEnd = min(end, offset + length)
      let header = next == 0 ? "hop-by-hop" : "destination options"
      if next == 0 || next == 60 {
        var option = offset + 2
        var padding = 0
        while option < headerEnd {
          let type = frame.u8(option)
          if type == 0 {
            padding += 1
            option += 1
            if padding > 7 { return "\(header) header: \(padding) bytes of padding (at most 7)" }
            continue
          }
          guard option + 2 <= headerEnd else {
            return "\(header) header: an option cut at the header's end"
          }
          let dataLength = Int(frame.u8(option + 1))
          guard option + 2 + dataLength <= headerEnd else {
            return "\(header) header: option \(type) runs past the header's end"
          }
          let data = UnsafeRawBufferPointer(
            rebasing: frame[(option + 2)..<(option + 2 + dataLength)])
          if type == 1 {
            padding += 2 + dataLength
            if data.contains(where: { $0 != 0 }) {
              return "\(header) header: PadN carries \(dataLength) bytes of data "
                + ClearProtocolRecogniser.preview(data) + " (RFC 8200: its bytes are zero)"
            }
            if padding > 7 { return "\(header) header: \(padding) bytes of padding (at most 7)" }
          } else if !(type == 5 && next == 0 && dataLength == 2 && frame.u16(option + 2) == 0) {
            return "\(header) header: option type \(type) with \(dataLength) bytes "
              + ClearProtocolRecogniser.preview(data)
              + " (only padding and MLD's router alert are allowed)"
          } else {
            padding = 0
          }
          option += 2 + dataLength
        }
      }
      next = frame.u8(offset)
      offset += length
    }
    return nil
  }
}
