import Foundation
import TestSupport
import Testing

@testable import Scenarios

/// A black box's scenario: the program spec as files write it (errors naming the field), the
/// profile's one verb, and the two program expectations judged from the launcher's events,
/// each with its canary (what it must catch) and its control (what it must pass).
@Suite struct ProgramScenarioTests {
  static let spec = """
    {"argv": ["curl", "-s", "http://web.example/"], "env": {"LANG": "C"}, "cwd": "/tmp",
     "tor": "arti", "start": "after-bootstrap",
     "success": {"exit": 0, "output": "^HTTP/1\\\\.[01] 200", "file": "/tmp/out"}}
    """

  @Test func aProfileFileReadsEveryFieldAndTheCommandLineWins() throws {
    let spec = try ProgramSpecParser.parse(Self.spec, file: "p.json")
    #expect(spec.arguments == ["curl", "-s", "http://web.example/"])
    #expect(spec.environment == ["LANG": "C"])
    #expect(spec.workingDirectory == "/tmp")
    #expect(spec.tor == .arti && spec.personality == .arti)
    #expect(spec.start == .afterBootstrap)
    #expect(
      spec.success == ProgramSpec.Success(exit: 0, output: "^HTTP/1\\.[01] 200", file: "/tmp/out"))
    let given = try ProgramSpecParser.parse(
      #"{"tor": "ctor"}"#, file: "p.json", command: ["wget", "x"])
    #expect(given.arguments == ["wget", "x"])
    #expect(given == ProgramSpec(arguments: ["wget", "x"]))
  }

  @Test(arguments: [
    (#"{}"#, "p.json: missing \"argv\""),
    (#"{"argv": []}"#, "argv: expected at least 1 arguments"),
    (#"{"argv": [3]}"#, "argv[0]: expected a string"),
    (#"{"argv": ["x"], "env": {"A": 1}}"#, "env: A: expected a string value"),
    (#"{"argv": ["x"], "tor": "real"}"#, "tor"),
    (
      #"{"argv": ["x"], "success": {"output": "("}}"#,
      "success.output: '(' is not a regular expression"
    ),
    (#"{"argv": ["x"], "succes": {}}"#, "succes: unknown field (did you mean \"success\"?)"),
  ])
  func aBadProfileNamesTheField(text: String, expected: String) {
    do {
      _ = try ProgramSpecParser.parse(text, file: "p.json")
      Issue.record("accepted \(text)")
    } catch {
      #expect("\(error)".contains(expected), "\(error)")
    }
  }

  static func file(_ app: String, expect: String = #"[{"kind": "fails-closed"}]"#) -> String {
    """
    {"title": "t", "proves": "p", "duration": 30,
     "tor": {"personality": "ctor", "bootstrap": "never"},
     "app": \(app), "expect": \(expect)}
    """
  }

  @Test func aProgramScenarioStartsAtZeroUnlessItSaysAndTakesOnlyStart() throws {
    let plain = try ScenarioParser.parse(Self.file(#"{"profile": "program"}"#), file: "s.json")
    #expect(plain.app.profile == .program)
    #expect(plain.app.actions == [AppAction(at: 0, step: .start)])
    #expect(plain.app.program == nil)
    let own = try ScenarioParser.parse(
      Self.file(
        #"{"profile": "program", "program": \#(Self.spec), "actions": [{"at": 5, "do": "start"}]}"#),
      file: "s.json")
    #expect(own.app.program?.arguments.first == "curl")
    #expect(own.app.actions == [AppAction(at: 5, step: .start)])
    #expect(throws: ScenarioError.self) {
      try ScenarioParser.parse(
        Self.file(#"{"profile": "program", "actions": [{"at": 1, "do": "send-message"}]}"#),
        file: "s.json")
    }
    do {
      _ = try ScenarioParser.parse(
        Self.file(
          #"{"profile": "bitchat", "program": {"argv": ["x"]}, "actions": [{"at": 0, "do": "start"}]}"#
        ),
        file: "s.json")
      Issue.record("a command accepted for the bitchat profile")
    } catch {
      #expect("\(error)".contains("app.program: a command is given only with"), "\(error)")
    }
  }

  static func judge(
    _ expectation: ScenarioExpectation, _ events: [ScenarioEvent],
    success: ProgramSpec.Success = ProgramSpec.Success()
  ) -> ExpectationResult {
    let scenario = Scenario(
      name: "p", path: "p.json", title: "t", proves: "p", duration: 30,
      tor: TorPlan(personality: .ctor, bootstrap: "never"),
      app: AppPlan(
        profile: .program, actions: [AppAction(at: 0, step: .start)],
        program: ProgramSpec(arguments: ["x"], success: success)),
      expectations: [expectation])
    return ExpectationJudge.judge(scenario, makeOutcome(events: events)).expectations[0]
  }

  static let started = ev(0.1, "program.started", ["value": "at-start"])

  @Test func failsClosedCatchesASuccessAndPassesAFailureOrAWait() {
    let failsClosed = ScenarioExpectation(ScenarioExpectation.FailsClosed())
    // Canary: it succeeded although Tor could carry nothing.
    let succeeded = Self.judge(failsClosed, [Self.started, ev(2, "program.exit", ["value": "0"])])
    #expect(succeeded.status == .failed)
    #expect(
      succeeded.reason.contains("it succeeded (exit 0: exited 0 at 2 s)"), "\(succeeded.reason)")
    // Controls: an error exit, and a wait to the end.
    let failed = Self.judge(failsClosed, [Self.started, ev(2, "program.exit", ["value": "7"])])
    #expect(failed.status == .met)
    #expect(failed.reason == "it failed: it exited with status 7")
    let waited = Self.judge(failsClosed, [Self.started, ev(30, "program.killed", ["value": "x"])])
    #expect(waited.status == .met)
    #expect(waited.reason.hasPrefix("it waited: it was still running at the end"))
    // A success by output: exit 0 without the line is no success.
    let noLine = Self.judge(
      failsClosed, [Self.started, ev(2, "program.exit", ["value": "0"])],
      success: ProgramSpec.Success(exit: 0, output: "200 OK"))
    #expect(noLine.status == .met)
    // Never started: nothing to judge.
    let never = Self.judge(failsClosed, [ev(0, "program.error", ["value": "ENOENT"])])
    #expect(never.status == .inconclusive)
    #expect(never.reason == "the program never started: ENOENT")
  }

  @Test func programSucceedsHoldsEveryPartOfTheSuccess() {
    let succeeds = ScenarioExpectation(ScenarioExpectation.ProgramSucceeds())
    let success = ProgramSpec.Success(exit: 0, output: "^HTTP/1\\.1 200", file: "/tmp/out")
    let all = [
      Self.started, ev(1, "program.output", ["value": "HTTP/1.1 200 OK"]),
      ev(2, "program.exit", ["value": "0"]), ev(2, "program.file", ["value": "/tmp/out"]),
    ]
    #expect(Self.judge(succeeds, all, success: success).status == .met)
    // Canaries: each part missing in turn.
    let wrongStatus = Self.judge(
      succeeds, [Self.started, ev(2, "program.exit", ["value": "6"])])
    #expect(wrongStatus.status == .failed)
    #expect(wrongStatus.reason == "it exited with status 6")
    let noFile = Self.judge(succeeds, Array(all.dropLast()), success: success)
    #expect(noFile.reason == "/tmp/out was not written")
    let otherLine = Self.judge(
      succeeds,
      [Self.started, ev(1, "program.output", ["value": "HTTP/1.1 502 Bad Gateway"])]
        + all.suffix(2),
      success: success)
    #expect(otherLine.reason == "no line of its output matched '^HTTP/1\\.1 200'")
    let killed = Self.judge(succeeds, [Self.started, ev(30, "program.killed", ["value": "x"])])
    #expect(killed.status == .failed)
    // The expectation's own parts replace the profile's.
    let own = ScenarioExpectation(
      ScenarioExpectation.ProgramSucceeds(success: ProgramSpec.Success(exit: 6)))
    #expect(Self.judge(own, [Self.started, ev(2, "program.exit", ["value": "6"])]).status == .met)
  }

  @Test func theLibrarysProgramFilesParseAndEachTorFailureExpectsFailingClosed() throws {
    let loaded = ScenarioLoader.load([scenariosDirectory + "/program"])
    #expect(loaded.count >= 10)
    for item in loaded {
      let scenario = try item.result.get()
      #expect(scenario.app.profile == .program, "\(scenario.name)")
      #expect(scenario.expectations.contains { $0.as(ScenarioExpectation.NoLeak.self) != nil })
      let control = scenario.expectations.contains {
        $0.as(ScenarioExpectation.ProgramSucceeds.self) != nil
      }
      let closed = scenario.expectations.contains {
        $0.as(ScenarioExpectation.FailsClosed.self) != nil
      }
      #expect(!(control && closed), "\(scenario.name) expects both")
      // Where Tor never becomes usable for the program, it must fail closed.
      if scenario.tor.mock?.bootstrap.hasPrefix("stall") == true
        || scenario.tor.mock?.bootstrap == "never" || scenario.tor.mock?.crashAt != nil
      {
        #expect(closed, "\(scenario.name)")
      }
    }
  }

  /// docs/programs.md's table lists exactly the files of Scenarios/program.
  @Test func theGuideListsEveryProgramScenario() throws {
    let guide = try String(contentsOfFile: repositoryRoot + "/docs/programs.md", encoding: .utf8)
    let listed = Set(
      guide.split(separator: "\n").filter { $0.hasPrefix("| `program-") }.compactMap {
        $0.split(separator: "`").dropFirst().first.map(String.init)
      })
    let files = Set(
      try FileManager.default.contentsOfDirectory(atPath: scenariosDirectory + "/program")
        .filter { $0.hasSuffix(".json") }.map { String($0.dropLast(5)) })
    #expect(listed == files)
  }
}
