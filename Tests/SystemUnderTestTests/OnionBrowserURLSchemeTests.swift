import Testing

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

  @Test func aURLBeforeTorIsHeldAndLoadsOnceTorConnects() {
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
