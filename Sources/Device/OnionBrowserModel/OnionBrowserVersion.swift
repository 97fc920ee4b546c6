import TorControl

/// Which Onion Browser major version a controller follows, each read at one commit of
/// OnionBrowser/OnionBrowser (../shared/reference/apps-contract.md):
/// - 1.X @6ec0fdfc: OnionBrowser/TorController.m and OnionBrowser/OnionBrowser/AppDelegate.m
///   (its own control-port client: polls, heartbeat, HUP and reconnect; URL schemes
///   onionbrowser:/onionbrowsers:, asked before loading; bridges written into its torrc).
/// - 2.X @9a17dd4f: OnionBrowser/OnionManager.swift and OnionBrowser/AppDelegate.swift over
///   Tor.framework 407.13.1's TORController.m (events, the 15 s connection guard, RELOAD then
///   NEWNYM, SIGNAL SHUTDOWN on background; schemes onionhttp/onionhttps).
/// - 3.X @44edf9a8: OnionBrowser/TorManager.swift, SceneDelegate.swift and
///   Browsing/Tab+WKNavigationDelegate.swift over Tor.framework 408.10.1 (TORController.m as in
///   407.13.1): events only, ready at CIRCUIT_ESTABLISHED plus the SOCKS listener, no guard,
///   page loads cancelled until then, SIGNAL SHUTDOWN on terminate.
public enum OnionBrowserVersion: String, Hashable, Sendable, CaseIterable {
  case v1 = "1"
  case v2 = "2"
  case v3 = "3"

  /// The profile name (`onion-browser-1` ...).
  public var profileName: String { "onion-browser-\(rawValue)" }
}
