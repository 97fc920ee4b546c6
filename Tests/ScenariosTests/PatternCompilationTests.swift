import Foundation
import Testing

@testable import Scenarios

/// Regular expressions are compiled once: each fixed field pattern once for every file parsed,
/// a program's `output` REGEX once when its file is parsed, never again for each check of a
/// run. Counted per pattern text (tests in parallel compile others meanwhile).
@Suite struct PatternCompilationTests {
  /// The library parsed twice, and twenty times a file with a bootstrap plan, 50 fault
  /// destinations and censor and poisoning host names: each fixed pattern was compiled once
  /// in the whole process.
  @Test func fixedFieldPatternsAreCompiledOnceForEveryFile() throws {
    for _ in 0..<2 {
      let loaded = ScenarioLoader.load([scenariosDirectory])
      #expect(loaded.count > 20)
    }
    let faults = (0..<50).map {
      #"{"destination": "host\#($0).example:443", "fault": "drop"}"#
    }
    let text = scenarioText()
      .replacingOccurrences(
        of: #""bootstrap": "never""#,
        with: #""bootstrap": "never", "faults": ["# + faults.joined(separator: ", ") + "]"
      )
      .replacingOccurrences(
        of: #""duration": 90,"#,
        with: #""duration": 90, "network": {"censor": [{"action": "drop", "to": "world"}], "#
          + #""dnsPoisoning": [{"name": "nos.lol"}]},"#)
    for _ in 0..<20 {
      let scenario = try ScenarioParser.parse(text, file: "many.json")
      #expect(scenario.name == "many")
    }
    for pattern in [
      ScenarioParser.Pattern.bootstrapPlan, ScenarioParser.Pattern.destination,
      ScenarioParser.Pattern.host,
    ] {
      #expect(CompiledPattern.compilations(of: pattern) == 1, "\(pattern)")
    }
  }

  /// Canary: a program's `output` REGEX judged ten times (as the expectations of one run and
  /// the report do) is compiled once, when its file was parsed; and it still matches.
  @Test func aProgramsOutputPatternIsCompiledOnceAtParseTime() throws {
    let pattern = "^canary-\(UUID().uuidString) [0-9]+$"
    let text = """
      {"argv": ["x"], "success": {"exit": 0, "output": \(JSONValue.string(pattern).serialized())}}
      """
    let spec = try ProgramSpecParser.parse(text, file: "p.json")
    #expect(CompiledPattern.compilations(of: pattern) == 1)
    let printed = String(pattern.dropFirst().dropLast().dropLast(7)) + " 200"
    let run = ProgramRun([
      ScenarioEvent(time: 0, name: "program.started", fields: ["value": "at-start"]),
      ScenarioEvent(time: 1, name: "program.output", fields: ["value": printed]),
      ScenarioEvent(time: 2, name: "program.exit", fields: ["value": "0"]),
    ])
    for _ in 0..<10 { #expect(run.shortfall(of: spec.success) == []) }
    #expect(CompiledPattern.compilations(of: pattern) == 1)
  }
}
