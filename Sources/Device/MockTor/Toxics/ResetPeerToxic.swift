/// reset_after=BYTES (toxiproxy's reset_peer): sends the client a TCP RST once BYTES have
/// flowed, both directions counted.
public struct ResetPeerToxic: StreamToxic, Equatable {
  public static let name = "reset_after"
  public static let aliases = ["reset_peer"]
  public static let valueName: String? = "BYTES"
  public static let summary = "send the client a TCP RST once BYTES flowed, both ways counted"

  public let bytes: Int

  public init(bytes: Int) { self.bytes = bytes }

  public init(value: String?, name: String) throws(ToxicValueError) {
    bytes = try ToxicValueError.bytes(value, name: name)
  }

  public var directions: Set<StreamDirection> { [.upstream, .downstream] }
  public func resets(after flowed: Int) -> Bool { flowed > bytes }
  public var description: String { "reset_after=\(bytes)" }
}
