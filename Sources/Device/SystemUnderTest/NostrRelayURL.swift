import Foundation

/// bitchat's relay URL normalisation (NostrRelayURL.normalized): trimmed; a default scheme
/// prepended when there is no "://"; wss and https become wss without :443, ws and http become
/// ws without :80, any other scheme is refused; the host lowercased; a bare "/" path and the
/// fragment dropped; the query kept. No .onion special case; cleartext ws:// is accepted.
public enum NostrRelayURL {
  public static func normalized(_ rawValue: String, defaultScheme: String? = nil) -> String? {
    let trimmed = rawValue.trimmingCharacters(in: .whitespacesAndNewlines)
    if trimmed.isEmpty { return nil }
    let withScheme =
      trimmed.contains("://") || defaultScheme == nil ? trimmed : defaultScheme! + "://" + trimmed
    guard var parts = URLComponents(string: withScheme),
      let host = parts.host?.lowercased(), !host.isEmpty,
      let scheme = parts.scheme.map({ $0.lowercased() }),
      let (normalScheme, defaultPort) = schemes[scheme]
    else { return nil }
    parts.scheme = normalScheme
    if parts.port == defaultPort { parts.port = nil }
    parts.host = host
    if parts.path == "/" { parts.path = "" }
    parts.fragment = nil
    return parts.string
  }

  /// Accepted schemes: each becomes a WebSocket scheme whose default port is dropped.
  private static let schemes: [String: (String, Int)] = [
    "wss": ("wss", 443), "https": ("wss", 443), "ws": ("ws", 80), "http": ("ws", 80),
  ]

  /// The host of a normalised relay URL.
  public static func host(of url: String) -> String? {
    URLComponents(string: url)?.host
  }

  public static func isOnion(_ url: String) -> Bool {
    host(of: url)?.hasSuffix(".onion") ?? false
  }
}
