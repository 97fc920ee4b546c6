/// The URLSession the bitchat-source driver gives bitchat's code (its `--transport`): the
/// shims' Apple-like session, or swift-corelibs' stock one (which leaks on Linux: the canary).
public enum BitchatSourceTransport: String, Sendable, CaseIterable {
  /// BitchatShims/FoundationNetworkingShim: SOCKS5h as Apple's URLSession does it.
  case apple
  /// Stock swift-corelibs URLSession, which ignores the SOCKS dictionary.
  case linuxFoundation = "linux-foundation"

  /// Parses `--transport`, with the error naming the option.
  public init(option text: String) throws(BitchatSourceTransportError) {
    guard let transport = Self(rawValue: text) else {
      throw BitchatSourceTransportError(
        "--transport: expected "
          + Self.allCases.map(\.rawValue).joined(separator: " or ") + ", got '\(text)'")
    }
    self = transport
  }
}

public struct BitchatSourceTransportError: Error, CustomStringConvertible, Sendable {
  public let description: String
  init(_ description: String) { self.description = description }
}
