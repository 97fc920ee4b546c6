import SOCKS

/// Which way bytes flow through a stream (toxiproxy's `stream` attribute): upstream from the
/// client to the destination, downstream from the destination to the client.
public enum StreamDirection: String, Sendable, CaseIterable {
  case upstream
  case downstream
}

/// How a toxic answers a SOCKS request in place of the destination.
public enum ToxicAnswer: Sendable, Equatable {
  /// A failure reply with this code; the stream ends.
  case reply(SOCKSReplyCode)
  /// No reply ever; what the client sends is swallowed (toxiproxy's timeout=0).
  case silence
}

/// One of the mock's stream faults, in toxiproxy's vocabulary: a name, a value, the directions
/// it acts on, and what it does at each point of a stream. The relay asks every toxic of a
/// destination at each point; a toxic answers only where it acts (the defaults do nothing).
/// Every toxic is registered in ``StreamToxics/registered``, which the parser, `--help` and the
/// tests read; scenario files reach it through Vocabulary's `StreamFaultKinds`, whose
/// spellings ScenariosTests hold to this registry.
public protocol StreamToxic: Sendable, CustomStringConvertible {
  /// Its name in a fault spec ("latency" in "latency=200").
  static var name: String { get }
  /// Other names it answers to (toxiproxy's own, where they differ).
  static var aliases: [String] { get }
  /// What its value is, for `--help` ("MS"); nil when it takes none.
  static var valueName: String? { get }
  /// Whether the value may be left out ("blackhole" and "blackhole=BYTES").
  static var valueIsOptional: Bool { get }
  /// What it does, in a line.
  static var summary: String { get }
  /// Reads the value after "name=" (nil when there was none); `name` is the name as written.
  init(value: String?, name: String) throws(ToxicValueError)

  /// The directions whose bytes it shapes, counts or swallows.
  var directions: Set<StreamDirection> { get }
  /// Seconds to wait before the request is answered (by a toxic or by the destination).
  var delayBeforeAnswer: Double { get }
  /// Its answer in place of the destination's, if it gives one.
  var answer: ToxicAnswer? { get }
  /// The most bytes to read at once in `direction` (a bandwidth's pacing).
  func readLimit(_ direction: StreamDirection) -> Int?
  /// Whether the stream is reset once `flowed` bytes (both directions) would have passed.
  func resets(after flowed: Int) -> Bool
  /// Whether the stream goes silent once `flowed` bytes (both directions) would have passed:
  /// nothing more passes either way and nothing closes.
  func silences(after flowed: Int) -> Bool
  /// Seconds to wait before passing on `count` bytes in `direction`.
  func delay(before count: Int, _ direction: StreamDirection) -> Double
  /// Seconds to wait after passing on `count` bytes in `direction`.
  func delay(after count: Int, _ direction: StreamDirection) -> Double
  /// Seconds to wait, once the sending side closed, before passing the close on in `direction`.
  func delayBeforeClosing(_ direction: StreamDirection) -> Double
}

extension StreamToxic {
  /// Its registered name (``name``), from an instance.
  public var toxicName: String { Self.name }

  public static var aliases: [String] { [] }
  public static var valueIsOptional: Bool { false }
  public var delayBeforeAnswer: Double { 0 }
  public var answer: ToxicAnswer? { nil }
  public func readLimit(_ direction: StreamDirection) -> Int? { nil }
  public func resets(after flowed: Int) -> Bool { false }
  public func silences(after flowed: Int) -> Bool { false }
  public func delay(before count: Int, _ direction: StreamDirection) -> Double { 0 }
  public func delay(after count: Int, _ direction: StreamDirection) -> Double { 0 }
  public func delayBeforeClosing(_ direction: StreamDirection) -> Double { 0 }
}

/// Why a toxic's value was refused (the spec it came from is added by the parser).
public struct ToxicValueError: Error, Sendable {
  public let reason: String

  public init(_ reason: String) { self.reason = reason }

  /// A whole number of bytes >= 0 (at most 2^52, so it converts to Int exactly), or the error.
  static func bytes(_ value: String?, name: String) throws(ToxicValueError) -> Int {
    let number = try number(value, name: name, unit: "bytes")
    guard number <= 0x10_0000_0000_0000 else {
      throw ToxicValueError("\(name) needs at most 2^52 bytes, got '\(value ?? "")'")
    }
    return Int(number)
  }

  /// A number >= 0, or the error naming the toxic and the unit it wants.
  static func number(_ value: String?, name: String, unit: String) throws(ToxicValueError)
    -> Double
  {
    guard let value, let number = Double(value), number >= 0, number.isFinite else {
      throw ToxicValueError("\(name) needs a number of \(unit) >= 0, got '\(value ?? "")'")
    }
    return number
  }
}

/// A registered toxic: its names and help, and its parser.
public struct ToxicKind: Sendable {
  public let name: String
  public let aliases: [String]
  public let valueName: String?
  public let valueIsOptional: Bool
  public let summary: String
  private let make: @Sendable (String?, String) -> Result<any StreamToxic, ToxicValueError>

  public init<Toxic: StreamToxic>(_ type: Toxic.Type) {
    name = Toxic.name
    aliases = Toxic.aliases
    valueName = Toxic.valueName
    valueIsOptional = Toxic.valueIsOptional
    summary = Toxic.summary
    make = { value, name in
      do throws(ToxicValueError) {
        return .success(try Toxic(value: value, name: name))
      } catch {
        return .failure(error)
      }
    }
  }

  /// Reads the value after "name=" (nil when there was none); `name` is the name as written.
  public func parse(value: String?, name: String) -> Result<any StreamToxic, ToxicValueError> {
    make(value, name)
  }
}
