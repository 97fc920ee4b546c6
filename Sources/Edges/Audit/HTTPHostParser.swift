/// Finds the Host header of an HTTP/1.x request at the start of a TCP segment (the request
/// line and headers in clear are evidence of a leak's destination).
public enum HTTPHostParser {
  private static let methods: [[UInt8]] = [
    "GET ", "POST ", "HEAD ", "PUT ", "DELETE ", "OPTIONS ", "CONNECT ", "PATCH ", "TRACE ",
  ].map { Array($0.utf8) }

  /// A quick test on the first byte: every method starts with an upper-case letter.
  @inline(__always)
  public static func mayBeRequest(_ segment: UnsafeRawBufferPointer) -> Bool {
    guard let first = segment.first else { return false }
    return first >= 0x41 && first <= 0x54
  }

  public static func host(_ segment: UnsafeRawBufferPointer) -> String? {
    guard mayBeRequest(segment) else { return nil }
    guard
      methods.contains(where: { method in
        segment.count >= method.count && zip(segment, method).allSatisfy { $0 == $1 }
      })
    else { return nil }
    let limit = min(segment.count, 8192)
    let header = Array("\r\nhost:".utf8)
    var index = 0
    while index + header.count <= limit {
      var matches = true
      for (offset, expected) in header.enumerated() {
        let byte = segment[index + offset]
        let lowered = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
        if lowered != expected {
          matches = false
          break
        }
      }
      if matches {
        var start = index + header.count
        while start < limit, segment[start] == 0x20 || segment[start] == 0x09 { start += 1 }
        var end = start
        while end < limit, segment[end] != 0x0D, segment[end] != 0x0A { end += 1 }
        guard end > start else { return nil }
        return NameText.printable(
          Array(segment[start..<end]).map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 })
      }
      index += 1
    }
    return nil
  }
}
