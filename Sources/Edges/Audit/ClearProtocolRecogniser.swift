/// Recognises a clear protocol from the first bytes of a TCP stream: what an obfs4 bridge's
/// first bytes must not be (obfs4's client handshake is an Elligator representative and
/// random padding, at least 149 bytes in one write), and what the evidence of a failed Tor
/// endpoint names. Pure. The tests are chosen so random bytes match with odds under one in
/// a million each: a TLS record header (3 bytes fixed), an HTTP method and a space, a SOCKS
/// or DNS message whose own length is its whole first segment, 16 bytes of text.
public enum ClearProtocolRecogniser {
  /// The clear protocol `head` (the stream's first bytes, at most 16 read) starts, or nil.
  /// `firstSegment` is the length of the stream's first segment; `complete` says the stream
  /// ended with these bytes (then text is judged on fewer than 16).
  public static func recognise(_ head: UnsafeRawBufferPointer, firstSegment: Int, complete: Bool)
    -> String?
  {
    let count = head.count
    if count >= 3, (20...23).contains(head.u8(0)), head.u8(1) == 3, head.u8(2) <= 4 {
      return count >= 6 && head.u8(0) == 22 && head.u8(5) == 1
        ? "a TLS ClientHello" : "a TLS record"
    }
    var letters = 0
    while letters < count && letters < 10 && head.u8(letters) >= 0x41 && head.u8(letters) <= 0x5A {
      letters += 1
    }
    if letters >= 3 && letters < count && head.u8(letters) == 0x20 {
      return "an HTTP request line"
    }
    if count >= 2, head.u8(0) == 5, (1...9).contains(head.u8(1)),
      firstSegment == 2 + Int(head.u8(1))
    {
      return "a SOCKS5 greeting"
    }
    if count >= 2, head.u8(0) == 4, head.u8(1) == 1 || head.u8(1) == 2, firstSegment < 64 {
      return "a SOCKS4 request"
    }
    if count >= 8, firstSegment >= 14, Int(head.u16(0)) == firstSegment - 2,
      head.u8(4) & 0xF8 == 0, head.u16(6) == 1
    {
      return "a DNS query (over TCP)"
    }
    if count >= 16 || (complete && count >= 4) {
      var printable = true
      for index in 0..<count {
        let byte = head.u8(index)
        if !((byte >= 0x20 && byte < 0x7F) || byte == 0x09 || byte == 0x0A || byte == 0x0D) {
          printable = false
          break
        }
      }
      if printable { return "a line of text" }
    }
    return nil
  }

  /// The first bytes as a reader sees them: printable ASCII as is, the rest escaped, at most
  /// `limit` bytes.
  public static func preview(_ bytes: UnsafeRawBufferPointer, limit: Int = 48) -> String {
    var text = ""
    for byte in bytes.prefix(limit) {
      switch byte {
      case 0x0D: text += "\\r"
      case 0x0A: text += "\\n"
      case 0x5C: text += "\\\\"
      case 0x22: text += "\\\""
      case 0x20..<0x7F: text.unicodeScalars.append(Unicode.Scalar(byte))
      default:
        let digits = Array("0123456789abcdef")
        text += "\\x" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 0x0F)])
      }
    }
    return "\"" + text + (bytes.count > limit ? "...\"" : "\"")
  }
}
