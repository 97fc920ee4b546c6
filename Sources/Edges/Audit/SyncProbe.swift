/// The capture's positive-control packet: UDP from the device to `destination` carrying
/// exactly `payload` (a live capture knows the run's own bytes, with a random token), or, for
/// a file audited later, any payload in the harness's probe format
/// (`failclosed-sync-probe[ fc-<6 hex>[ <16 hex>]]`): nothing a program could use to carry
/// data of its own. Matching packets (and the port-unreachable errors they draw, arriving
/// from `destination`) are counted as control, never as leaks, up to
/// ``maximumPackets``; when a probe is configured and none is seen, the verdict is
/// inconclusive.
public struct SyncProbe: Sendable, Hashable {
  public var destination: Endpoint
  /// The exact payload; nil accepts any payload in the harness's probe format.
  public var payload: [UInt8]?

  public init(destination: Endpoint, payload: [UInt8]?) {
    self.destination = destination
    self.payload = payload
  }

  /// The text every harness probe starts with.
  public static let defaultPrefix = Array("failclosed-sync-probe".utf8)

  /// The harness sends at most 20 probes a run; more are a program imitating them.
  public static let maximumPackets = 32

  /// A probe payload for one run: the prefix, the run's namespace prefix and a random token.
  public static func payload(runPrefix: String) -> [UInt8] {
    let token = (0..<16).map { _ in String(Int.random(in: 0..<16), radix: 16) }.joined()
    return defaultPrefix + Array(" \(runPrefix) \(token)".utf8)
  }

  /// Whether `payload` is this probe's.
  func matches(_ bytes: UnsafeRawBufferPointer) -> Bool {
    if let payload { return bytes.count == payload.count && bytes.elementsEqual(payload) }
    let prefix = Self.defaultPrefix
    guard bytes.count >= prefix.count, zip(bytes, prefix).allSatisfy({ $0 == $1 }) else {
      return false
    }
    // Then nothing, " fc-" and 6 hex digits, or that and " " and 16 hex digits.
    let rest = Array(bytes[prefix.count...])
    func hex(_ slice: ArraySlice<UInt8>) -> Bool {
      slice.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
    switch rest.count {
    case 0: return true
    case 10, 27:
      guard rest[0...3].elementsEqual(Array(" fc-".utf8)), hex(rest[4..<10]) else { return false }
      return rest.count == 10 || (rest[10] == 0x20 && hex(rest[11..<27]))
    default: return false
    }
  }
}
