/// blackhole (toxiproxy's timeout=0): accepts the request but never answers, and swallows what
/// the client sends.
public struct BlackholeToxic: StreamToxic, Equatable {
  public static let name = "blackhole"
  public static let aliases = ["timeout"]
  public static let valueName: String? = nil
  public static let summary = "never answer; swallow what the client sends"

  public init() {}

  public init(value: String?, name: String) throws(ToxicValueError) {
    if name == "timeout", let value, value != "0" {
      throw ToxicValueError("only timeout=0 (blackhole) is supported")
    }
  }

  public var directions: Set<StreamDirection> { [.upstream] }
  public var answer: ToxicAnswer? { .silence }
  public var description: String { "blackhole" }
}
