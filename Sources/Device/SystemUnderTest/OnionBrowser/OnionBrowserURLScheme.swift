import OnionBrowserModel
import TorControl

/// What each Onion Browser version does with an incoming app URL, from its sources.
/// - 1.X (AppDelegate.m l.355-400): a case-sensitive prefix "onionbrowser:/" has its first 14
///   characters replaced by "http:/", "onionbrowsers:/" its first 15 by "https:/" (only in the
///   app whose bundle is com.miketigas.OnionBrowser, l.363-365: the model is that app);
///   anything else is ignored.
/// - 2.X (AppDelegate.swift l.236-241, URL+Helpers.swift l.25-42, Endless/Info.plist l.30-36):
///   the registered schemes onionhttp, onionhttps, http and https; `withFixedScheme` turns
///   onionhttp(s) (any case) into http(s) and leaves the others as they are.
/// - 3.X (SceneDelegate.swift l.124-143, Resources/Info.plist l.30-44): "onionbrowser:" is
///   only Orbot's callback (token-callback, main) and opens nothing; onionhttp(s), http(s) open
///   a new tab with `withFixedScheme`.
public enum OnionBrowserURLScheme {
  public enum Decision: Sendable, Equatable {
    /// Not a URL this version takes (or not registered: iOS never delivers it).
    case ignored
    /// 3.X: an `onionbrowser:` URL, Orbot's callback; no page.
    case callback
    /// The web URL to open.
    case web(String)
  }

  public static func decide(_ url: String, version: OnionBrowserVersion) -> Decision {
    switch version {
    case .v1:
      return rewrite(url).map(Decision.web) ?? .ignored
    case .v2, .v3:
      guard let colon = url.firstIndex(of: ":") else { return .ignored }
      let scheme = url[..<colon]
      let rest = url[colon...]
      if version == .v3 && scheme == "onionbrowser" { return .callback }
      switch scheme.lowercased() {
      case "onionhttp": return .web("http" + rest)
      case "onionhttps": return .web("https" + rest)
      case "http", "https": return .web(url)
      default: return .ignored
      }
    }
  }

  /// 1.X's rewrite: the web URL an incoming app URL becomes, or nil when it is ignored.
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

/// 1.X's start URL (AppDelegate.m l.388-399, TorController.m l.329-341): a URL that arrives
/// before Tor's first 100 % is kept (one slot: a later one replaces it); at 100 % the browser
/// asks the user before loading it (askToLoadURL), or loads its home page (`onionbrowser:home`,
/// a page of the app, no network) when none is held; after that, every new URL is asked about.
public struct OnionBrowserLaunchQueue: Sendable, Equatable {
  public enum Decision: Sendable, Equatable {
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

  /// Tor connected: the held start URL, which the user is now asked about (once).
  public mutating func torDidConnect() -> String? {
    torConnected = true
    defer { startURL = nil }
    return startURL
  }
}
