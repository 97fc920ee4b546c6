/// Finds the server name (SNI, RFC 6066) in a TLS ClientHello at the start of a TCP segment.
/// A ClientHello split over several segments yields its name only if the extension is in the
/// first one, which is how every common client sends it.
public enum TLSClientHelloParser {
  /// A quick test for the first bytes of a TLS handshake record carrying a ClientHello.
  @inline(__always)
  public static func looksLikeClientHello(_ segment: UnsafeRawBufferPointer) -> Bool {
    segment.count >= 6 && segment.u8(0) == 0x16 && segment.u8(1) == 0x03 && segment.u8(5) == 0x01
  }

  public static func serverName(_ segment: UnsafeRawBufferPointer) -> String? {
    guard looksLikeClientHello(segment) else { return nil }
    // Record header (5), handshake header (4), version (2), random (32).
    var offset = 5 + 4 + 2 + 32
    let end = segment.count
    guard end > offset else { return nil }
    offset += 1 + Int(segment.u8(offset))  // session id
    guard end >= offset + 2 else { return nil }
    offset += 2 + Int(segment.u16(offset))  // cipher suites
    guard end >= offset + 1 else { return nil }
    offset += 1 + Int(segment.u8(offset))  // compression methods
    guard end >= offset + 2 else { return nil }
    let extensionsEnd = min(end, offset + 2 + Int(segment.u16(offset)))
    offset += 2
    while offset + 4 <= extensionsEnd {
      let type = segment.u16(offset)
      let length = Int(segment.u16(offset + 2))
      let body = offset + 4
      if type == 0 {
        // server_name_list: length (2), then entries of type (1), length (2), name.
        var entry = body + 2
        while entry + 3 <= min(extensionsEnd, body + length) {
          let nameType = segment.u8(entry)
          let nameLength = Int(segment.u16(entry + 1))
          guard entry + 3 + nameLength <= extensionsEnd else { return nil }
          if nameType == 0 {
            let bytes = Array(segment[(entry + 3)..<(entry + 3 + nameLength)])
            return NameText.printable(bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 })
          }
          entry += 3 + nameLength
        }
        return nil
      }
      offset = body + length
    }
    return nil
  }
}
