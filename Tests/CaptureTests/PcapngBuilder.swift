import Foundation

/// Builds little-endian pcapng files block by block, for tests of what the reader does with
/// inputs no writer here produces (timestamps past 2262, interface time offsets).
struct PcapngBuilder {
  private(set) var bytes: [UInt8] = []

  init() {
    // Section header: byte-order magic, version 1.0, section length unknown (-1).
    var body: [UInt8] = []
    body += Self.le32(0x1A2B_3C4D) + Self.le16(1) + Self.le16(0)
    body += [UInt8](repeating: 0xFF, count: 8)
    append(type: 0x0A0D_0D0A, body: body)
  }

  /// An Ethernet interface, with `if_tsoffset` (seconds) when given.
  mutating func addInterface(timeOffsetSeconds: Int64? = nil) {
    var body = Self.le16(1) + Self.le16(0) + Self.le32(262_144)
    if let offset = timeOffsetSeconds {
      body += Self.le16(14) + Self.le16(8) + Self.le64(UInt64(bitPattern: offset))
      body += Self.le16(0) + Self.le16(0)
    }
    append(type: 1, body: body)
  }

  /// An enhanced packet block on interface 0; `microseconds` since the epoch (the default
  /// resolution).
  mutating func addPacket(microseconds: UInt64, frame: [UInt8]) {
    var body = Self.le32(0) + Self.le32(UInt32(microseconds >> 32))
    body += Self.le32(UInt32(microseconds & 0xFFFF_FFFF))
    body += Self.le32(UInt32(frame.count)) + Self.le32(UInt32(frame.count)) + frame
    body += [UInt8](repeating: 0, count: (4 - frame.count % 4) % 4)
    append(type: 6, body: body)
  }

  private mutating func append(type: UInt32, body: [UInt8]) {
    let total = UInt32(12 + body.count)
    bytes += Self.le32(type) + Self.le32(total) + body + Self.le32(total)
  }

  static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
  static func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8((value >> ($0 * 8)) & 0xFF) } }
  static func le64(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8((value >> ($0 * 8)) & 0xFF) } }
}
