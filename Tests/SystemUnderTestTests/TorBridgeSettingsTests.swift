import Testing

@testable import SystemUnderTest

/// The `tor.bridges` setting: validation that names the line and the part, and the profile's
/// rule (bitchat ignores bridges, hardened uses them or refuses to start tor).
@Suite struct TorBridgeSettingsTests {
  static let fingerprint = String(repeating: "A1", count: 20)
  static let obfs4 = "obfs4 10.66.1.106:4433 \(fingerprint) cert=abc iat-mode=0"

  @Test func aMalformedLineIsNamedByIndexAndPart() {
    let lines = [Self.obfs4, "obfs4 10.66.1.106:4433 XYZ cert=abc iat-mode=0"]
    #expect(
      throws: TorBridgeSettingsError("tor.bridges[1]: 'XYZ' is not a 40-hex-digit fingerprint")
    ) {
      try TorBridgeSettings.validate(lines)
    }
    #expect(throws: TorBridgeSettingsError("tor.bridges[0]: obfs4 needs cert=...")) {
      try TorBridgeSettings.validate(["obfs4 10.66.1.106:4433 \(Self.fingerprint) iat-mode=0"])
    }
    #expect(
      throws: TorBridgeSettingsError(
        "tor.bridges[0]: 'bridge.example' is not an IP address (bridges are given by address, "
          + "never by name)")
    ) {
      try TorBridgeSettings.validate(["bridge.example:443"])
    }
  }

  @Test func theStoreMustHoldAnArrayOfStrings() throws {
    #expect(try TorBridgeSettings.lines(in: KeyValueStore()) == [])
    #expect(throws: TorBridgeSettingsError("tor.bridges: expected an array of bridge lines")) {
      try TorBridgeSettings.lines(in: KeyValueStore(values: ["tor.bridges": Self.obfs4]))
    }
    #expect(throws: TorBridgeSettingsError("tor.bridges[1]: expected a string (a bridge line)")) {
      try TorBridgeSettings.lines(in: KeyValueStore(values: ["tor.bridges": [Self.obfs4, 7]]))
    }
  }

  @Test func writeValidatesThenStores() throws {
    let store = KeyValueStore()
    try TorBridgeSettings.write([Self.obfs4], to: store)
    #expect(store.stringArray(forKey: "tor.bridges") == [Self.obfs4])
    #expect(throws: TorBridgeSettingsError.self) { try TorBridgeSettings.write(["x"], to: store) }
    #expect(store.stringArray(forKey: "tor.bridges") == [Self.obfs4])
  }

  @Test func bitchatIgnoresBridgesHardenedUsesThem() throws {
    let store = KeyValueStore(values: ["tor.bridges": [Self.obfs4, "Bridge 10.66.1.105:9001"]])
    #expect(TorBridgeSettings.decide(store: store, profile: .bitchat) == .ignored(count: 2))
    guard case .use(let bridges) = TorBridgeSettings.decide(store: store, profile: .hardened) else {
      Issue.record("hardened does not use valid bridges")
      return
    }
    #expect(bridges.map(\.text) == ["\(Self.obfs4)", "10.66.1.105:9001"])
    #expect(TorBridgeSettings.decide(store: KeyValueStore(), profile: .hardened) == .none)
    #expect(TorBridgeSettings.decide(store: KeyValueStore(), profile: .bitchat) == .none)
  }

  /// Fail closed: a malformed list under hardened is no start at all, never a start without
  /// bridges; bitchat never reads the list, so it ignores a malformed one too.
  @Test func aMalformedListStopsHardenedButNotBitchat() {
    let store = KeyValueStore(values: ["tor.bridges": [Self.obfs4, "obfs4 10.66.1.106:4433"]])
    #expect(
      TorBridgeSettings.decide(store: store, profile: .hardened)
        == .invalid(TorBridgeSettingsError("tor.bridges[1]: obfs4 needs cert=...")))
    #expect(TorBridgeSettings.decide(store: store, profile: .bitchat) == .ignored(count: 2))
    let notAnArray = KeyValueStore(values: ["tor.bridges": "x"])
    #expect(
      TorBridgeSettings.decide(store: notAnArray, profile: .hardened)
        == .invalid(TorBridgeSettingsError("tor.bridges: expected an array of bridge lines")))
  }
}
