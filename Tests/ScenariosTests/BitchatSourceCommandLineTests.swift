import BitchatSource
import Foundation
import Testing

@testable import Lanes
@testable import Scenarios

/// Scenario files on the bitchat-source lane: which scenarios the driver runs, with which
/// transport, and its command line.
struct BitchatSourceCommandLineTests {
  let scenariosDirectory: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path + "/Scenarios"
  }()

  func load(_ name: String) throws -> Scenario {
    try ScenarioLoader.loadFile(scenariosDirectory + "/" + name).get()
  }

  @Test func theProfileBitchatSourceParsesAndAlwaysUsesTheAppleTransport() throws {
    let text = try String(
      contentsOfFile: scenariosDirectory + "/healthy-baseline.json", encoding: .utf8
    ).replacingOccurrences(of: #""profile": "bitchat""#, with: #""profile": "bitchat-source""#)
    let scenario = try ScenarioParser.parse(text, file: "Scenarios/source.json")
    #expect(scenario.app.profile == .bitchatSource)
    #expect(
      try ScenarioCommandLines.bitchatSourceTransport(scenario, driver: "/d", substitute: false)
        == .apple)
    #expect(throws: ScenarioError.self) {
      try ScenarioCommandLines.bitchatSourceTransport(scenario, driver: nil, substitute: false)
    }
  }

  @Test func substitutingRunsBitchatOnAppleAndTheNaivePortCanaryOnStockFoundation() throws {
    let bitchat = try load("healthy-baseline.json")
    let canary = try load("naive-port-canary.json")
    let hardened = try load("socks-listener-late-hardened.json")
    #expect(
      try ScenarioCommandLines.bitchatSourceTransport(bitchat, driver: "/d", substitute: false)
        == nil)
    #expect(
      try ScenarioCommandLines.bitchatSourceTransport(bitchat, driver: "/d", substitute: true)
        == .apple)
    #expect(
      try ScenarioCommandLines.bitchatSourceTransport(canary, driver: "/d", substitute: true)
        == .linuxFoundation)
    #expect(
      try ScenarioCommandLines.bitchatSourceTransport(hardened, driver: "/d", substitute: true)
        == nil)
  }

  @Test func aControlPortScenarioCannotDriveArti() throws {
    let ctor = try load("tls-dropped-after-handshake.json")
    #expect(throws: ScenarioError.self) {
      try ScenarioCommandLines.bitchatSourceTransport(ctor, driver: "/d", substitute: true)
    }
  }

  @Test func theDriversCommandLineCarriesTheSameFilesAsTheModels() {
    #expect(
      ScenarioCommandLines.bitchatSourceApp(
        driver: "/cache/bitchat-source-driver", transport: .apple, actionsFile: "/w/actions.jsonl",
        stateDirectory: "/w/state", trustAnchors: "/w/world-ca.pem")
        == [
          "/cache/bitchat-source-driver", "--actions", "/w/actions.jsonl", "--state-dir",
          "/w/state",
          "--ca", "/w/world-ca.pem", "--transport", "apple",
        ])
  }
}
