import Foundation
import Testing

@testable import Scenarios

/// Found by an adversarial probe: the duplicate-key check scanned every earlier key (an object
/// of 40,000 keys took minutes), `flows-only-to` with all 65,535 ports took 105 s, and a 50 MB
/// file hung the loader. Large inputs now parse in linear time and oversized files are refused
/// by name.
@Suite struct ScenarioSizeLimitTests {
  @Test func anObjectWith40000KeysParsesAndADuplicateAmongThemIsNamed() throws {
    let keys = (0..<40_000).map { "\"k\($0)\": \($0)" }
    let value = try JSONParser.parse("{" + keys.joined(separator: ",") + "}")
    guard case .object(let members) = value else {
      Issue.record("not an object")
      return
    }
    #expect(members.count == 40_000)
    #expect(members.last?.key == "k39999")
    let duplicated = "{" + (keys + ["\"k20000\": 1"]).joined(separator: ",") + "}"
    #expect {
      _ = try JSONParser.parse(duplicated)
    } throws: { error in
      (error as? JSONSyntaxError)?.message == "duplicate member \"k20000\""
    }
  }

  @Test func flowsOnlyToTakesEveryPortAndNamesARepeatedOne() throws {
    let all = (1...65_535).map(String.init).joined(separator: ",")
    let scenario = try ScenarioParser.parse(
      realScenarioText(expect: #"[{"kind": "flows-only-to", "ports": [\#(all)]}]"#),
      file: "Scenarios/r.json")
    guard let ports = scenario.expectations.first?.as(ScenarioExpectation.FlowsOnlyTo.self)?.ports
    else {
      Issue.record("no flows-only-to")
      return
    }
    #expect(ports.count == 65_535)
    #expect {
      _ = try ScenarioParser.parse(
        realScenarioText(expect: #"[{"kind": "flows-only-to", "ports": [\#(all),443]}]"#),
        file: "Scenarios/r.json")
    } throws: { error in
      (error as? ScenarioError)?.description
        == "Scenarios/r.json: expect[0].ports[65535]: port 443 is listed twice"
    }
  }

  @Test func anOversizedScenarioIsAClearErrorReadOrLoaded() throws {
    let padding = String(repeating: " ", count: ScenarioParser.maximumFileBytes)
    let text = scenarioText() + padding
    #expect {
      _ = try ScenarioParser.parse(text, file: "big.json")
    } throws: { error in
      (error as? ScenarioError)?.message
        == "the file is \(text.utf8.count) bytes; a scenario may be at most 1048576 bytes"
    }
    let dir = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try text.write(toFile: dir + "/big.json", atomically: true, encoding: .utf8)
    try scenarioText().write(toFile: dir + "/small.json", atomically: true, encoding: .utf8)
    let loaded = ScenarioLoader.load([dir])
    #expect(loaded.count == 2)
    if case .failure(let error) = loaded[0].result {
      #expect(error.description.hasPrefix(dir + "/big.json: the file is "))
      #expect(error.message.hasSuffix("a scenario may be at most 1048576 bytes"))
    } else {
      Issue.record("big.json loaded")
    }
    // The positive control: the ordinary file beside it still loads.
    #expect((try? loaded[1].result.get()) != nil)
  }
}
