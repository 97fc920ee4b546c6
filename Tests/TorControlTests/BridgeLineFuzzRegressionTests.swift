import Testing

@testable import TorControl

/// Inputs tools/fuzz found (Fuzz/Targets/BridgeLine.swift), kept as regression tests.
@Suite struct BridgeLineFuzzRegressionTests {
  let cert = "cert=ssH+9rP8dG2NLDN2XuFw63hIO/9MNNinLmxQDpVa+7kTOa9/m+tGWT1SmSYpQ9uTBGa6Hw"

  /// An accepted line is written into the torrc as `Bridge <text>`: a newline inside an
  /// argument started a torrc line of its own, here `UseBridges 0`, which unpins tor.
  @Test(arguments: ["\n", "\r", "\u{0}", "\t", "\u{1B}", "\u{85}"])
  func controlCharactersInsideALineAreRefused(_ control: String) throws {
    let input = "obfs4 10.66.1.15:4433 \(cert) iat-mode=0 zz=x\(control)UseBridges\t0"
    #expect(throws: BridgeLine.ParseError.self) { try BridgeLine(input) }
    do {
      _ = try BridgeLine(input)
    } catch let error as BridgeLine.ParseError {
      #expect(error.reason.hasPrefix("control character U+"))
    }
  }

  /// The input the fuzzer found (crash-9e4a9d73...): NULs and a newline inside cert=.
  @Test func theFuzzersInputIsRefused() {
    let input =
      "Bridge obfs4 10.66.1.15:4433 0123456789ABCDEF0123456789ABCDEF01234567 cert="
      + String(repeating: "A", count: 36) + "\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\n"
      + String(repeating: "A", count: 26) + " iat-mode=0"
    #expect(throws: BridgeLine.ParseError.self) { try BridgeLine(input) }
  }

  @Test func noAcceptedLineWritesMoreThanOneTorrcLine() throws {
    let bridge = try BridgeLine("\tobfs4 10.66.1.15:4433 \(cert) iat-mode=0 \t")
    let torrc = ClientTorrc.options(
      dataDirectory: "/c", logDirectory: "/c", socksPort: 39050, controlPort: 39051,
      bridges: [bridge], disableNetwork: false
    ).joined(separator: "\n")
    let bridgeLines = torrc.split(separator: "\n").filter { $0.hasPrefix("Bridge ") }
    #expect(bridgeLines == ["Bridge \(bridge.text)"])
    #expect(!torrc.contains("UseBridges 0") && !torrc.contains("UseBridges\t0"))
  }
}
