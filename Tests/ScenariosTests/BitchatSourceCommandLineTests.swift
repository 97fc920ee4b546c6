import BitchatSource
import Foundation
import Testing

@testable import Lanes
@testable import Scenarios

/// Scenario files on the bitchat-source lane: which scenarios the driver runs, with which
/// transport, and its command line.
struct BitchatSourceCommandLineTests {
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

  @Test func theRestartScenariosOrderArtisBootstrapsAndTheDriverIsTold() throws {
    let race = try load("path-change-and-restart.json")
    let benign = try load("path-change-and-restart-stopped-first.json")
    #expect(race.tor.mock?.bootstrapEndOrder == .stoppedLast)
    #expect(benign.tor.mock?.bootstrapEndOrder == .stoppedFirst)
    let command = ScenarioCommandLines.bitchatSourceApp(
      driver: "/d", transport: .apple, actionsFile: "/a", stateDirectory: "/s",
      trustAnchors: "/c", bootstrapEndOrder: race.tor.mock?.bootstrapEndOrder)
    #expect(command.suffix(2) == ["--bootstrap-end-order", "stopped-last"])
    // Everything else about the two files is the same restart.
    #expect(race.app.actions == benign.app.actions)
    #expect(race.duration == benign.duration)
  }

  @Test func theOrderIsArtisOnlyAndItsWordsAreTheShimsWords() throws {
    let text = try String(
      contentsOfFile: scenariosDirectory + "/path-change-and-restart.json", encoding: .utf8)
    let ctor = text.replacingOccurrences(
      of: #""personality": "arti""#, with: #""personality": "ctor""#)
    #expect(throws: ScenarioError.self) { try ScenarioParser.parse(ctor, file: "Scenarios/c.json") }
    let misspelt = text.replacingOccurrences(of: "stopped-last", with: "stoped-last")
    do {
      _ = try ScenarioParser.parse(misspelt, file: "Scenarios/m.json")
      Issue.record("a misspelt order parsed")
    } catch {
      #expect("\(error)".contains("tor.bootstrapEndOrder"))
    }
    // The shims' driver (a package of its own) spells the same words.
    let shim = try String(
      contentsOfFile: scenariosDirectory + "/../BitchatShims/ArtiLinux/ArtiBootstrapEndOrder.swift",
      encoding: .utf8)
    let words = shim.split(separator: "\n").compactMap { line -> String? in
      guard line.contains("case "), let open = line.firstIndex(of: "\"") else { return nil }
      return String(line[line.index(after: open)...].prefix { $0 != "\"" })
    }
    #expect(words == TorPlan.BootstrapEndOrder.allCases.map(\.rawValue))
  }
}
