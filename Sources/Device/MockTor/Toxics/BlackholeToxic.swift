/// blackhole (toxiproxy's timeout=0): accepts the request but never answers, and swallows what
/// the client sends. blackhole=BYTES: answers and relays until more than BYTES would have
/// flowed (both directions counted, like reset_after), then passes nothing more either way,
/// swallows what the client sends and never closes: a stream that stalls part-way.
public struct BlackholeToxic: StreamToxic, Equatable {
  public static let name = "blackhole"
  public static let aliases = ["timeout"]
  public static let valueName: String? = "BYTES"
  public static let valueIsOptional = true
  public static let summary =
    "never answer; with BYTES, go silent once BYTES flowed, both ways counted; swallow what "
    + "the client sends"

  /// Bytes relayed before the silence; nil: the request itself is never answered.
  public let afterBytes: Int?

  public init(afterBytes: Int? = nil) { self.afterBytes = afterBytes }

  public init(value: String?, name: String) throws(ToxicValueError) {
    guard name != "timeout" else {
      if let value, value != "0" {
        throw ToxicValueError("only timeout=0 (blackhole) is supported")
      }
      afterBytes = nil
      return
    }
    if let value {
      afterBytes = try ToxicValueError.bytes(value, name: name)
    } else {
      afterBytes = nil
    }
  }

  public var directions: Set<StreamDirection> {
    afterBytes == nil ? [.upstream] : [.upstream, .downstream]
  }

  public var answer: ToxicAnswer? { afterBytes == nil ? .silence : nil }

  public func silences(after flowed: Int) -> Bool { afterBytes.map { flowed > $0 } ?? false }

  public var description: String { "blackhole" + (afterBytes.map { "=\($0)" } ?? "") }
}
