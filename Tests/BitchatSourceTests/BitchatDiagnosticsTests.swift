import Foundation
import Testing

@testable import BitchatSource

/// The compiler's diagnostics for the generated package, mapped back to bitchat's files.
struct BitchatDiagnosticsTests {
  let links = [
    "/cache/k/Sources/Tor/TorManager.swift": "localPackages/Arti/Sources/TorManager.swift",
    "/cache/k/Sources/BitchatApp/NostrRelayManager.swift": "bitchat/Nostr/NostrRelayManager.swift",
  ]

  @Test func anUnknownTypeNamesTheFileTheSymbolAndTheShim() {
    let output = """
      [12/40] Compiling Tor TorManager.swift
      /cache/k/Sources/Tor/TorManager.swift:231:20: error: cannot find 'NWBrowser' in scope
          |                    `- error: cannot find 'NWBrowser' in scope
      """
    let errors = BitchatDiagnostics.parse(output, links: links, root: "/src/bitchat")
    #expect(
      errors == [
        .unknownSymbol(
          file: "/src/bitchat/localPackages/Arti/Sources/TorManager.swift", line: 231,
          symbol: "NWBrowser", shim: "the Network shim (BitchatShims/Network)",
          diagnostic: "cannot find 'NWBrowser' in scope",
          origin: "no file of the checkout declares it")
      ])
  }

  @Test func aMissingMemberNamesItsOwnersShim() {
    let output = """
      /cache/k/Sources/BitchatApp/NostrRelayManager.swift:57:14: error: value of type 'URLSessionWebSocketTask' has no member 'delegate'
      /cache/k/Sources/BitchatApp/NostrRelayManager.swift:90:9: error: cannot find type 'ChannelMember' in scope
      /cache/k/Sources/BitchatApp/NostrRelayManager.swift:91:9: error: value of type 'AnyPublisher<Int, Never>' has no member 'debounce'
      """
    let errors = BitchatDiagnostics.parse(output, links: links, root: "/src/bitchat")
    let shims = errors.compactMap { error -> String? in
      if case .unknownSymbol(_, _, let symbol, let shim, _, _) = error {
        return "\(symbol): \(shim)"
      }
      return nil
    }
    #expect(
      shims == [
        "delegate: the FoundationNetworking shim (BitchatShims/FoundationNetworkingShim)",
        "ChannelMember: the app stand-ins (BitchatShims/AppStandIns)",
        "debounce: the Combine shim (BitchatShims/Combine)",
      ])
  }

  @Test func errorsOutsideBitchatsFilesAreNotBlamedOnThem() {
    let output = "/cache/k/Sources/Combine/Combine.swift:1:1: error: cannot find 'X' in scope"
    #expect(BitchatDiagnostics.parse(output, links: links, root: "/src/bitchat").isEmpty)
  }

  @Test func anUnknownModuleSaysNoShimHasIt() {
    let output = "/cache/k/Sources/Tor/TorManager.swift:3:8: error: no such module 'CryptoKit'"
    let errors = BitchatDiagnostics.parse(output, links: links, root: "/src/bitchat")
    guard case .unknownSymbol(_, 3, "CryptoKit", let shim, _, _)? = errors.first else {
      Issue.record("expected an unknown-symbol error, got \(errors)")
      return
    }
    #expect(shim.contains("no shim module named CryptoKit"))
  }
}
