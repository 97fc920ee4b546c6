/// Reads the question names of a DNS message (RFC 1035 §4.1.2), as sent over UDP, over TCP
/// after a 2-byte length, and by mDNS and LLMNR, which share the format.
public enum DNSQuestionParser {
  /// At most this many questions are read from one message.
  public static let maximumQuestions = 4

  /// Names in the question section, lower-cased, without the trailing dot. Empty when the
  /// bytes are not a well-formed DNS message head.
  public static func questionNames(_ message: UnsafeRawBufferPointer) -> [String] {
    guard message.count >= 12 else { return [] }
    let questions = Int(message.u16(4))
    guard questions > 0 else { return [] }
    var names: [String] = []
    var offset = 12
    for _ in 0..<min(questions, maximumQuestions) {
      guard let (name, next) = readName(message, offset) else { break }
      names.append(name)
      offset = next + 4  // type and class
      guard offset <= message.count else { break }
    }
    return names
  }

  /// A DNS message carried over TCP starts with its length; a segment that starts a message
  /// yields its names.
  public static func questionNamesOverTCP(_ segment: UnsafeRawBufferPointer) -> [String] {
    guard segment.count >= 14 else { return [] }
    return questionNames(UnsafeRawBufferPointer(rebasing: segment[2...]))
  }

  /// Whether the message is a query (QR bit clear).
  public static func isQuery(_ message: UnsafeRawBufferPointer) -> Bool {
    message.count >= 3 && message.u8(2) & 0x80 == 0
  }

  /// Reads a possibly compressed name at `offset`; returns it and the offset after it in the
  /// message (after the first pointer, if any).
  static func readName(_ message: UnsafeRawBufferPointer, _ start: Int) -> (String, Int)? {
    var labels: [UInt8] = []
    var offset = start
    var resume: Int?
    var jumps = 0
    while true {
      guard offset < message.count else { return nil }
      let length = Int(message.u8(offset))
      if length == 0 {
        offset += 1
        break
      }
      if length & 0xC0 == 0xC0 {
        guard offset + 1 < message.count, jumps < 16 else { return nil }
        if resume == nil { resume = offset + 2 }
        offset = Int(message.u16(offset) & 0x3FFF)
        jumps += 1
        continue
      }
      guard length < 64, offset + 1 + length <= message.count, labels.count + length < 255 else {
        return nil
      }
      if !labels.isEmpty { labels.append(UInt8(ascii: ".")) }
      for index in (offset + 1)..<(offset + 1 + length) {
        let byte = message.u8(index)
        labels.append(byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte)
      }
      offset += 1 + length
    }
    let name = labels.isEmpty ? "." : NameText.printable(labels)
    return (name, resume ?? offset)
  }
}

/// Names from the wire are shown as text: printable ASCII kept, everything else escaped.
enum NameText {
  static func printable(_ bytes: [UInt8]) -> String {
    var text = ""
    text.reserveCapacity(bytes.count)
    for byte in bytes {
      if byte >= 0x21 && byte < 0x7F {
        text.unicodeScalars.append(Unicode.Scalar(byte))
      } else {
        text += "\\" + String(byte, radix: 8)
      }
    }
    return text
  }
}
