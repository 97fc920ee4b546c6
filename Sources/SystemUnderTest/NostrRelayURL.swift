import Foundation

/// bitchat's relay URL normalisation (NostrRelayURL.normalized): trimmed; a default scheme
/// prepended when there is no "://"; wss and https become wss without :443, ws and http become
/// ws without :80, any other scheme is refused; the host lowercased; a bare "/" path and the
/// fragment dropped; the query kept. No .onion special case; cleartext ws:// is accepted.
public enum NostrRelayURL {
  public static func normalized(_ rawValue: String, defaultScheme: String? = nil) -> String? {
    var value = rawValue.trimmingCharacters(in: .whitespacesAndNewlines)
    guard !value.isEmpty else { return nil }
    if !value.contains("://"), let defaultScheme {
      value = "\(defaultScheme)://\(value)"
    }
    guard var components = URLComponents(string: value),
      let rawScheme = components.scheme?.lowercased(),
      let rawHost = components.host?.lowercased(),
      !rawHost.isEmpty
    else { return nil }
    switch rawScheme {
    case "wss", "https":
      components.scheme = "wss"
      if components.port == 443 { components.port = nil }
    case "ws", "http":
      components.scheme = "ws"
      if components.port == 80 { components.port = nil }
    default:
      return nil
    }
    components.host = rawHost
    if components.path == "/" { components.path = "" }
    components.fragment = nil
    return components.string
  }

  /// The host of a normalised relay URL.
  public static func host(of url: String) -> String? {
    URLComponents(string: url)?.host
  }

  public static func isOnion(_ url: String) -> Bool {
    host(of: url)?.hasSuffix(".onion") ?? false
  }
}
