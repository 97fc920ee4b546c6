import SOCKS

/// reply=CODE: answers the request with this SOCKS failure code, connecting nowhere.
public struct ReplyToxic: StreamToxic, Equatable {
  public static let name = "reply"
  public static let valueName: String? = "CODE"
  public static let summary = "answer the request with this SOCKS failure code (0x01-0x08, f0-f7)"

  public let code: SOCKSReplyCode

  public init(_ code: SOCKSReplyCode) { self.code = code }

  public init(value: String?, name: String) throws(ToxicValueError) {
    guard let value, let code = SOCKSReplyCode(text: value), code != .succeeded else {
      throw ToxicValueError(
        "reply needs a failure code 0x01-0x08 or f0-f7, got '\(value ?? "")'")
    }
    self.code = code
  }

  public var directions: Set<StreamDirection> { [] }
  public var answer: ToxicAnswer? { .reply(code) }
  public var description: String { "reply=0x" + String(code.rawValue, radix: 16) }
}
