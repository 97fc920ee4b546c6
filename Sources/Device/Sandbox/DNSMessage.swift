/// The little of DNS the fake resolvers need: read a query's question, write an answer.
/// Pure: bytes in, values out.
public struct DNSQuestion: Sendable, Hashable, Codable {
  public static let typeA: UInt16 = 1
  public static let typeAAAA: UInt16 = 28

  /// Lowercased, without the trailing dot.
  public let name: String
  public let type: UInt16
  public let `class`: UInt16

  public init(name: String, type: UInt16, class: UInt16 = 1) {
    self.name = name
    self.type = type
    self.class = `class`
  }
}

/// A DNS query that could not be read, with the byte offset at fault.
public struct DNSParseError: Error, Sendable, Equatable, CustomStringConvertible {
  public let offset: Int
  public let message: String
  public var description: String { "DNS message, byte \(offset): \(message)" }
}

public enum DNSMessage {
  /// Reads the ID, flags and first question of a query.
  public static func parseQuery(_ bytes: [UInt8]) throws(DNSParseError) -> (
    id: UInt16, flags: UInt16, question: DNSQuestion, questionEnd: Int
  ) {
    guard bytes.count >= 12 else {
      throw DNSParseError(offset: bytes.count, message: "header needs 12 bytes")
    }
    let id = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
    let flags = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
    let count = UInt16(bytes[4]) << 8 | UInt16(bytes[5])
    guard count >= 1 else { throw DNSParseError(offset: 4, message: "no question") }
    var offset = 12
    var labels: [String] = []
    while true {
      guard offset < bytes.count else {
        throw DNSParseError(offset: offset, message: "name runs past the end")
      }
      let length = Int(bytes[offset])
      if length == 0 {
        offset += 1
        break
      }
      guard length < 64 else {
        throw DNSParseError(
          offset: offset, message: "label length \(length) (compression in a question?)")
      }
      guard offset + 1 + length <= bytes.count else {
        throw DNSParseError(offset: offset, message: "label runs past the end")
      }
      labels.append(String(decoding: bytes[(offset + 1)..<(offset + 1 + length)], as: UTF8.self))
      offset += 1 + length
    }
    guard offset + 4 <= bytes.count else {
      throw DNSParseError(offset: offset, message: "question type and class missing")
    }
    let type = UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    let qclass = UInt16(bytes[offset + 2]) << 8 | UInt16(bytes[offset + 3])
    let question = DNSQuestion(
      name: labels.joined(separator: ".").lowercased(), type: type, class: qclass)
    return (id, flags, question, offset + 4)
  }

  /// An answer to `query` carrying `address` (4 bytes for A, 16 for AAAA), or no answer records
  /// when `address` is nil (NODATA). Only the first question is echoed.
  public static func answer(to query: [UInt8], address: [UInt8]?, ttl: UInt32 = 60)
    throws(DNSParseError) -> [UInt8]
  {
    let parsed = try parseQuery(query)
    let recursionDesired = parsed.flags & 0x0100
    let flags: UInt16 = 0x8000 | 0x0400 | recursionDesired | 0x0080  // QR, AA, RD, RA
    var out: [UInt8] = [
      UInt8(parsed.id >> 8), UInt8(parsed.id & 0xff), UInt8(flags >> 8), UInt8(flags & 0xff),
      0, 1, 0, address == nil ? 0 : 1, 0, 0, 0, 0,
    ]
    out += query[12..<parsed.questionEnd]
    if let address {
      let type: UInt16 = address.count == 4 ? DNSQuestion.typeA : DNSQuestion.typeAAAA
      out += [0xc0, 0x0c, UInt8(type >> 8), UInt8(type & 0xff), 0, 1]
      out += [
        UInt8(ttl >> 24), UInt8((ttl >> 16) & 0xff), UInt8((ttl >> 8) & 0xff), UInt8(ttl & 0xff),
      ]
      out += [0, UInt8(address.count)] + address
    }
    return out
  }

  /// A query for `name` (used by tests and the positive controls).
  public static func query(id: UInt16, name: String, type: UInt16) -> [UInt8] {
    var out: [UInt8] = [UInt8(id >> 8), UInt8(id & 0xff), 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]
    for label in name.split(separator: ".") {
      out.append(UInt8(label.utf8.count))
      out += label.utf8
    }
    out += [0, UInt8(type >> 8), UInt8(type & 0xff), 0, 1]
    return out
  }

  /// The addresses in an answer's A/AAAA records (tests read poisoned answers with it).
  public static func answerAddresses(_ bytes: [UInt8]) -> [[UInt8]] {
    guard let parsed = try? parseQuery(bytes), bytes.count >= 12 else { return [] }
    let answers = Int(bytes[6]) << 8 | Int(bytes[7])
    var offset = parsed.questionEnd
    var found: [[UInt8]] = []
    for _ in 0..<answers {
      // Skip the owner name: a pointer (2 bytes) or labels.
      while offset < bytes.count {
        if bytes[offset] & 0xc0 == 0xc0 {
          offset += 2
          break
        }
        if bytes[offset] == 0 {
          offset += 1
          break
        }
        offset += 1 + Int(bytes[offset])
      }
      guard offset + 10 <= bytes.count else { break }
      let length = Int(bytes[offset + 8]) << 8 | Int(bytes[offset + 9])
      let start = offset + 10
      guard start + length <= bytes.count else { break }
      if length == 4 || length == 16 { found.append(Array(bytes[start..<(start + length)])) }
      offset = start + length
    }
    return found
  }
}
