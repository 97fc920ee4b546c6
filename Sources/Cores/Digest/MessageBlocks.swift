/// The Merkle-Damgard framing SHA-1 and SHA-256 share (FIPS 180-4, 5.1.1 and 5.2.1): the
/// message padded with 0x80, zeros and its bit length to whole 64-byte blocks, each block read
/// as sixteen big-endian words.
enum MessageBlocks {
  static func padded(_ message: [UInt8]) -> [UInt8] {
    var data = message
    data.append(0x80)
    while data.count % 64 != 56 { data.append(0) }
    let bitLength = UInt64(message.count) &* 8
    for shift in stride(from: 56, through: 0, by: -8) {
      data.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
    }
    return data
  }

  /// Calls `body` with the first sixteen words of every block, in order, in `schedule`'s
  /// prefix (the rest of `schedule` is the hash's to fill).
  static func forEachBlock(
    of message: [UInt8], schedule: inout [UInt32], _ body: (inout [UInt32]) -> Void
  ) {
    let data = padded(message)
    for start in stride(from: 0, to: data.count, by: 64) {
      for i in 0..<16 {
        let j = start + i * 4
        schedule[i] =
          UInt32(data[j]) << 24 | UInt32(data[j + 1]) << 16 | UInt32(data[j + 2]) << 8
          | UInt32(data[j + 3])
      }
      body(&schedule)
    }
  }

  /// The state words as the big-endian digest bytes.
  static func bytes(_ words: [UInt32]) -> [UInt8] {
    words.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (24 - 8 * $0)) } }
  }
}
