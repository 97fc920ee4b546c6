/// Onion Browser 1.X's URL schemes, exactly as its AppDelegate handles them: a case-sensitive
/// prefix "onionbrowser:/" has its first 14 characters replaced by "http:/", "onionbrowsers:/"
/// its first 15 by "https:/"; anything else is ignored. A URL that arrives before Tor has
/// connected is kept as the start URL (one slot: a later one replaces it) and loaded once Tor
/// connects; after that, the browser asks the user to confirm before loading.
public enum OnionBrowserURLScheme {
  /// The web URL an incoming app URL becomes, or nil when Onion Browser ignores it.
  public static func rewrite(_ url: String) -> String? {
    // Byte-wise on purpose: the original compares and slices UTF-16 code units of an
    // NSString; the prefixes are ASCII, so bytes give the same answer.
    let bytes = Array(url.utf8)
    if bytes.starts(with: Array("onionbrowser:/".utf8)) {
      return "http:/" + String(decoding: bytes.dropFirst(14), as: UTF8.self)
    }
    if bytes.starts(with: Array("onionbrowsers:/".utf8)) {
      return "https:/" + String(decoding: bytes.dropFirst(15), as: UTF8.self)
    }
    return nil
  }
}

/// What Onion Browser does with an incoming URL, given whether Tor has connected.
public struct OnionBrowserLaunchQueue: Sendable, Equatable {
  public enum Decision: Sendable, Equatable {
    /// Not one of the schemes.
    case ignored
    /// Tor is not connected: kept as the start URL, nothing is loaded.
    case held(String)
    /// Tor is connected: the user is asked before it loads.
    case confirm(String)
  }

  public private(set) var torConnected = false
  public private(set) var startURL: String?

  public init() {}

  public mutating func open(_ url: String) -> Decision {
    guard let rewritten = OnionBrowserURLScheme.rewrite(url) else { return .ignored }
    if torConnected { return .confirm(rewritten) }
    startURL = rewritten
    return .held(rewritten)
  }

  /// Tor connected: returns the held start URL, which loads now (once).
  public mutating func torDidConnect() -> String? {
    torConnected = true
    defer { startURL = nil }
    return startURL
  }
}
