import Testing
import TorControl

@testable import SystemUnderTest

@Suite struct OnionBrowserURLSchemeTests {
  @Test(arguments: [
    ("onionbrowser://example.org/a?b=c", "http://example.org/a?b=c"),
    ("onionbrowsers://example.org/", "https://example.org/"),
    ("onionbrowser:/", "http:/"),
    ("onionbrowsers:/", "https:/"),
    ("onionbrowser:/x", "http:/x"),
    (
      "onionbrowser://duckduckgogg42xjoc72x3sjasowoarfbgcmvfimaftt6twagswzczad.onion/",
      "http://duckduckgogg42xjoc72x3sjasowoarfbgcmvfimaftt6twagswzczad.onion/"
    ),
    ("onionbrowser://\u{00E9}t\u{00E9}.example/", "http://\u{00E9}t\u{00E9}.example/"),
  ])
  func schemesAreRewrittenByPrefix(_ input: String, _ expected: String) {
    #expect(OnionBrowserURLScheme.rewrite(input) == expected)
  }

  @Test(arguments: [
    "OnionBrowser://example.org/",  // case-sensitive
    "ONIONBROWSERS://example.org/",
    "onionbrowser:example.org",  // no slash after the colon
    "onionbrowser",
    "onionhttp://example.org/",  // 2.X's schemes are not 1.X's
    "http://example.org/",
    " onionbrowser://example.org/",
    "",
  ])
  func everythingElseIsIgnored(_ input: String) {
    #expect(OnionBrowserURLScheme.rewrite(input) == nil)
  }

  /// 1.X AppDelegate.m l.367-383: case-sensitive prefixes.
  @Test func version1TakesOnlyItsPrefixes_ADm_l367_383() {
    #expect(
      OnionBrowserURLScheme.decide("onionbrowser://a.example/", version: .v1)
        == .web("http://a.example/"))
    #expect(OnionBrowserURLScheme.decide("OnionBrowser://a.example/", version: .v1) == .ignored)
    #expect(OnionBrowserURLScheme.decide("onionhttps://a.example/", version: .v1) == .ignored)
  }

  /// 2.X URL+Helpers.swift l.25-42 and Endless/Info.plist l.30-36: onionhttp(s) in any case,
  /// http(s) as they are, nothing else registered.
  @Test func version2TakesOnionhttpAnyCaseAndHttp_URLHelpers_l25_42() {
    #expect(
      OnionBrowserURLScheme.decide("onionhttp://a.example/x", version: .v2)
        == .web("http://a.example/x"))
    #expect(
      OnionBrowserURLScheme.decide("OnionHTTPS://a.example/", version: .v2)
        == .web("https://a.example/"))
    #expect(
      OnionBrowserURLScheme.decide("https://a.example/", version: .v2)
        == .web("https://a.example/"))
    #expect(OnionBrowserURLScheme.decide("onionbrowser://a.example/", version: .v2) == .ignored)
    #expect(OnionBrowserURLScheme.decide("mailto:x@a.example", version: .v2) == .ignored)
  }

  /// 3.X SceneDelegate.swift l.124-143: onionbrowser: is Orbot's callback, never a page.
  @Test func version3OnionbrowserIsOnlyAnOrbotCallback_SceneDelegate_l124_143() {
    #expect(
      OnionBrowserURLScheme.decide("onionbrowser:token-callback?token=x", version: .v3)
        == .callback)
    #expect(OnionBrowserURLScheme.decide("onionbrowser://a.example/", version: .v3) == .callback)
    #expect(
      OnionBrowserURLScheme.decide("onionhttps://a.example/", version: .v3)
        == .web("https://a.example/"))
  }

  /// 1.X AppDelegate.m l.388-399, TorController.m l.329-341: held before the first 100 %,
  /// then asked about (askToLoadURL), never loaded without the user.
  @Test func aURLBeforeTorIsHeldThenAskedAbout_ADm_l388_399_TCm_l329_341() {
    var queue = OnionBrowserLaunchQueue()
    #expect(queue.open("onionbrowser://first.example/") == .held("http://first.example/"))
    #expect(queue.open("onionbrowsers://second.example/") == .held("https://second.example/"))
    #expect(queue.open("mailto:x@example.org") == .ignored)
    #expect(queue.startURL == "https://second.example/")  // one slot: the later URL wins
    #expect(queue.torDidConnect() == "https://second.example/")
    #expect(queue.startURL == nil)
    #expect(queue.open("onionbrowser://third.example/") == .confirm("http://third.example/"))
    #expect(queue.torDidConnect() == nil)
  }
}
