/// Bytes received but not yet parsed, and where they sit in the whole stream (for the byte
/// offsets in error messages). Consumed bytes are dropped in amortised O(1).
struct ByteBuffer {
  private var storage: [UInt8] = []
  private var start = 0
  /// Stream offset of `storage[0]`.
  private var base = 0

  var count: Int { storage.count - start }
  var isEmpty: Bool { count == 0 }
  /// Stream offset of the first unconsumed byte.
  var offset: Int { base + start }

  subscript(index: Int) -> UInt8 { storage[start + index] }

  mutating func append(_ bytes: [UInt8]) {
    if start > 4096 && start * 2 > storage.count {
      storage.removeFirst(start)
      base += start
      start = 0
    }
    storage += bytes
  }

  /// Index (relative to the first unconsumed byte) of `pattern`, searching from `from`.
  func firstIndex(of pattern: [UInt8], from: Int = 0) -> Int? {
    guard count >= pattern.count else { return nil }
    var index = max(0, from)
    while index + pattern.count <= count {
      var match = true
      for (k, byte) in pattern.enumerated() where storage[start + index + k] != byte {
        match = false
        break
      }
      if match { return index }
      index += 1
    }
    return nil
  }

  func peek(_ n: Int) -> ArraySlice<UInt8> { storage[start..<(start + min(n, count))] }

  mutating func take(_ n: Int) -> [UInt8] {
    let n = min(n, count)
    let taken = Array(storage[start..<(start + n)])
    start += n
    return taken
  }

  mutating func skip(_ n: Int) { start += min(n, count) }

  mutating func takeAll() -> [UInt8] { take(count) }
}
