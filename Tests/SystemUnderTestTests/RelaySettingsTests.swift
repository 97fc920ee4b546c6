import Testing

@testable import SystemUnderTest

@Suite struct RelaySettingsTests {
  @Test(
    arguments: [
      ("relay.example.com", "wss", "wss://relay.example.com"),
      ("  Relay.Example.COM  ", "wss", "wss://relay.example.com"),
      ("wss://relay.example.com/", nil, "wss://relay.example.com"),
      ("https://relay.example.com:443", nil, "wss://relay.example.com"),
      ("wss://relay.example.com:8443", nil, "wss://relay.example.com:8443"),
      ("http://relay.example.com:80/", nil, "ws://relay.example.com"),
      ("ws://relay.example.com:7777", nil, "ws://relay.example.com:7777"),
      ("WSS://RELAY.EXAMPLE.COM/path#frag", nil, "wss://relay.example.com/path"),
      ("wss://relay.example.com/?x=1", nil, "wss://relay.example.com?x=1"),
      (
        "abcdefghijklmnopqrstuvwxyz234567abcdefghijklmnopqrstuvwx.onion", "wss",
        "wss://abcdefghijklmnopqrstuvwxyz234567abcdefghijklmnopqrstuvwx.onion"
      ),
    ] as [(String, String?, String)])
  func normalisation(raw: String, defaultScheme: String?, expected: String) {
    #expect(NostrRelayURL.normalized(raw, defaultScheme: defaultScheme) == expected)
  }

  @Test(arguments: ["", "   ", "ftp://relay.example.com", "relay.example.com", "wss://"])
  func normalisationRefuses(raw: String) {
    #expect(NostrRelayURL.normalized(raw) == nil)
  }

  @Test func settingsErrorsAndLimit() {
    let settings = NostrRelaySettings(
      store: KeyValueStore(), profile: .bitchat, torSupportsOnionServices: false)
    #expect(settings.add("ftp://x.example") == .failure(.malformed))
    #expect(settings.add("nos.lol") == .failure(.alreadyPresent))
    #expect(settings.add("relay0.example.com") == .success("wss://relay0.example.com"))
    #expect(settings.add("WSS://RELAY0.example.com/") == .failure(.alreadyPresent))
    for index in 1..<8 { _ = settings.add("relay\(index).example.com") }
    #expect(settings.customRelays().count == 8)
    #expect(settings.add("relay9.example.com") == .failure(.limitReached))
    settings.remove("relay3.example.com")
    #expect(settings.customRelays().count == 7)
  }

  @Test func weakness3OnionAcceptedInBitchatRefusedInHardened() {
    let onion = "abcdefghijklmnopqrstuvwxyz234567abcdefghijklmnopqrstuvwx.onion"
    let bitchat = NostrRelaySettings(
      store: KeyValueStore(), profile: .bitchat, torSupportsOnionServices: false)
    #expect(bitchat.add(onion) == .success("wss://\(onion)"))
    let hardened = NostrRelaySettings(
      store: KeyValueStore(), profile: .hardened, torSupportsOnionServices: false)
    #expect(hardened.add(onion) == .failure(.onionUnsupported))
    let hardenedWithOnion = NostrRelaySettings(
      store: KeyValueStore(), profile: .hardened, torSupportsOnionServices: true)
    #expect(hardenedWithOnion.add(onion) == .success("wss://\(onion)"))
  }

  @Test func storedValuesAreRenormalisedOnRead() {
    let store = KeyValueStore(values: [
      NostrRelaySettings.storageKey: ["WSS://A.example.com/", "wss://a.example.com", "ftp://b.x"]
    ])
    let settings = NostrRelaySettings(store: store, torSupportsOnionServices: false)
    #expect(settings.customRelays() == ["wss://a.example.com"])
  }
}
