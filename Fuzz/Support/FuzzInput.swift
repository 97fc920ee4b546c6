/// The fuzzer's bytes, read front to back: a target takes its few choices (link type, role,
/// chunking) from the first bytes and feeds the rest to the parser. Reading past the end gives
/// zeros, so every input is valid for the harness itself.
struct FuzzInput {
  let bytes: [UInt8]
  private(set) var position = 0

  init(_ data: UnsafePointer<UInt8>, _ size: Int) {
    bytes = Array(UnsafeBufferPointer(start: data, count: size))
  }

  mutating func byte() -> UInt8 {
    guard position < bytes.count else { return 0 }
    defer { position += 1 }
    return bytes[position]
  }

  mutating func choose<T>(_ options: [T]) -> T { options[Int(byte()) % options.count] }

  var rest: [UInt8] { Array(bytes[min(position, bytes.count)...]) }

  /// The rest cut into pieces of 1...`limit` bytes (sizes cycling), or whole when `limit` is 0:
  /// how a socket may deliver it, so incremental parsers see every split.
  mutating func restInChunks() -> [[UInt8]] {
    let limit = Int(byte() % 17)
    let data = rest
    guard limit > 0 else { return [data] }
    var chunks: [[UInt8]] = []
    var start = 0
    var size = 1
    while start < data.count {
      let end = min(start + size, data.count)
      chunks.append(Array(data[start..<end]))
      start = end
      size = size % limit + 1
    }
    return chunks
  }
}

/// A parser must make progress: a step that neither consumes nor ends would spin forever in
/// the I/O loop that drives it, so the harness stops it as a finding.
func fuzzCheck(_ condition: Bool, _ message: @autoclosure () -> String) {
  if !condition { fatalError("fuzz invariant: \(message())") }
}
