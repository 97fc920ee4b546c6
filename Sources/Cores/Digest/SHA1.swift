/// SHA-1 (FIPS 180-4), only for the WebSocket accept value, so the pure protocol modules need
/// no OpenSSL. Not for anything security-relevant.
public enum SHA1 {
  public static func digest(_ message: [UInt8]) -> [UInt8] {
    var h: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0]
    var w = [UInt32](repeating: 0, count: 80)
    MessageBlocks.forEachBlock(of: message, schedule: &w) { w in
      for i in 16..<80 { w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1) }
      var (a, b, c, d, e) = (h[0], h[1], h[2], h[3], h[4])
      for i in 0..<80 {
        let f: UInt32
        let k: UInt32
        switch i {
        case 0..<20:
          f = (b & c) | (~b & d)
          k = 0x5A82_7999
        case 20..<40:
          f = b ^ c ^ d
          k = 0x6ED9_EBA1
        case 40..<60:
          f = (b & c) | (b & d) | (c & d)
          k = 0x8F1B_BCDC
        default:
          f = b ^ c ^ d
          k = 0xCA62_C1D6
        }
        let temp = rotl(a, 5) &+ f &+ e &+ k &+ w[i]
        e = d
        d = c
        c = rotl(b, 30)
        b = a
        a = temp
      }
      for (index, value) in [a, b, c, d, e].enumerated() { h[index] &+= value }
    }
    return MessageBlocks.bytes(h)
  }

  private static func rotl(_ x: UInt32, _ n: UInt32) -> UInt32 { (x << n) | (x >> (32 - n)) }
}
