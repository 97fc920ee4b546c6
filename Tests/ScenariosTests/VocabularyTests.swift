import Foundation
import SystemUnderTest
import TestSupport
import Testing
import Vocabulary

@testable import Lanes
@testable import Scenarios

/// The shared vocabularies (Vocabulary's ActionVerbs and CensorAction, Scenarios' event
/// catalogue) are each one list that every reader goes through: the parsers, the shims' driver
/// (a generated copy), the schema and the guide. A trivial entry added in a test is read
/// everywhere; an entry taken out is rejected everywhere (the canaries).
struct VocabularyTests {
  /// A verb no one has: a text field with a fallback, acted on by bitchat's apps.
  static let wave = ActionVerb(
    "wave", "a test's trivial verb", scenario: ActionArgument("hand", .text(fallback: "left")),
    driver: ActionArgument("hand", .text(fallback: nil)), apps: .bitchat)
  static let withWave = ActionVerbs.all + [wave]

  static func scenarioText(actions: String, profile: String = "bitchat") -> String {
    """
    {"title": "t", "proves": "p", "duration": 30, "tor": {"personality": "arti", "bootstrap": "healthy"},
     "app": {"profile": "\(profile)", "actions": \(actions)},
     "expect": [{"kind": "no-leak"}]}
    """
  }

  @Test func aVerbAddedToTheListIsReadByTheScenarioParserTheDriverAndTheShimsCopy() throws {
    let text = Self.scenarioText(
      actions: #"[{"at": 0, "do": "start"}, {"at": 2, "do": "wave", "hand": "right"}]"#)
    let scenario = try ScenarioParser.parse(text, file: "t.json", verbs: Self.withWave)
    let step = scenario.app.actions[1].step
    #expect(step == .other(verb: "wave", argument: .text("right")))
    // The field's fallback comes from the entry too.
    let fallback = try ScenarioParser.parse(
      Self.scenarioText(actions: #"[{"at": 0, "do": "wave"}]"#), file: "t.json",
      verbs: Self.withWave)
    #expect(fallback.app.actions[0].step.scenarioArgument == .text("left"))
    // The runner's actions-file line, and the app driver reading it back.
    let kind = try #require(step.driverKind)
    let line = SystemUnderTest.AppAction(at: 2, kind).jsonLine(verbs: Self.withWave)
    #expect(line == #"{"at": 2, "action": "wave", "hand": "right"}"#)
    let read = try SystemUnderTest.AppAction.parseFile(line, name: "a", verbs: Self.withWave)
    #expect(
      read == [SystemUnderTest.AppAction(at: 2, .other(verb: "wave", argument: .text("right")))])
    // The shims' driver gets it in its generated copy, and the guide in its table.
    for copy in ActionVerbs.shimsCopies {
      #expect(
        ActionVerbs.shimsCopy(copy, of: Self.withWave).contains(#"("wave", "hand", nil),"#)
          == Self.withWave.last!.apps.contains(copy.family), "\(copy.path)")
    }
    #expect(ActionVerbs.guideTable(of: Self.withWave).contains("| `wave` | `hand`: text"))
    // The onion-browser profile does not model it: the error names the verbs it does.
    let onion = Self.scenarioText(actions: #"[{"at": 0, "do": "wave"}]"#, profile: "onion-browser")
      .replacingOccurrences(of: #""personality": "arti""#, with: #""personality": "ctor""#)
    #expect {
      try ScenarioParser.parse(onion, file: "t.json", verbs: Self.withWave)
    } throws: { "\($0)".contains(#""wave" is not modelled for the onion-browser profile"#) }
  }

  @Test func aVerbNotInTheListIsRejectedByBothParsers() {
    let text = Self.scenarioText(actions: #"[{"at": 0, "do": "wave"}]"#)
    #expect {
      try ScenarioParser.parse(text, file: "t.json")
    } throws: { "\($0)".contains("\"wave\"") }
    #expect {
      try SystemUnderTest.AppAction.parseFile(#"{"action": "wave", "hand": "x"}"#, name: "a")
    } throws: { "\($0)".contains("unknown action 'wave'") }
  }

  /// Canary: the library's files use send-message; with it taken out of the list, the parser
  /// rejects them, so the list is what the parser reads.
  @Test func aVerbTakenOutOfTheListIsRejected() throws {
    let path = scenariosDirectory + "/background-and-foreground.json"
    let text = try String(contentsOfFile: path, encoding: .utf8)
    let uses = ActionVerbs.all.filter { text.contains("\"do\": \"\($0.name)\"") }
    let removed = try #require(uses.first { $0.name != "start" })
    _ = try ScenarioParser.parse(text, file: path)
    #expect(throws: ScenarioError.self) {
      try ScenarioParser.parse(
        text, file: path, verbs: ActionVerbs.all.filter { $0 != removed })
    }
  }

  /// Each family's shims driver (a Swift 5 package that cannot import the project) reads its
  /// committed copy; it must be the list's. FAILCLOSED_REGENERATE=1 writes them.
  @Test(arguments: ActionVerbs.shimsCopies.map(\.path))
  func theShimsDriverCopyIsTheList(path: String) throws {
    let copy = try #require(ActionVerbs.shimsCopies.first { $0.path == path })
    let file = repositoryRoot + "/" + copy.path
    let expected = ActionVerbs.shimsCopy(copy)
    if ProcessInfo.processInfo.environment["FAILCLOSED_REGENERATE"] == "1" {
      try expected.write(toFile: file, atomically: true, encoding: .utf8)
    }
    let committed = try String(contentsOfFile: file, encoding: .utf8)
    #expect(committed == expected, "\(copy.path) must be:\n\(expected)")
    // Every verb of the family's actions files, and no other.
    for verb in ActionVerbs.all {
      let listed = committed.contains("(\"\(verb.name)\",")
      #expect(listed == (verb.inActionsFiles && verb.apps.contains(copy.family)), "\(verb.name)")
    }
  }

  @Test func theGuideAndTheSchemaCarryTheLists() throws {
    let guide = try String(contentsOfFile: scenariosDirectory + "/README.md", encoding: .utf8)
    let indented = { (table: String) in
      table.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n")
    }
    #expect(guide.contains(indented(ActionVerbs.guideTable())), "\(ActionVerbs.guideTable())")
    #expect(guide.contains(indented(CensorAction.guideTable)), "\(CensorAction.guideTable)")
    let schema = try JSONParser.parse(
      String(contentsOfFile: scenariosDirectory + "/scenario.schema.json", encoding: .utf8))
    #expect(
      schema["$defs"]?["censorRule"]?["properties"]?["action"]?["enum"]
        == .array(CensorAction.scenarioRules.map { .string($0.rawValue) }))
    // The app driver's guide lists exactly the actions-file verbs.
    let driverGuide = try String(
      contentsOfFile: repositoryRoot + "/docs/app-driver.md", encoding: .utf8)
    for verb in ActionVerbs.all {
      #expect(
        driverGuide.contains("| `\(verb.name)` |") == verb.inActionsFiles, "\(verb.name)")
    }
  }

  /// Every censor action a scenario may write is parsed and becomes a sandbox rule of its own
  /// action (one type on both sides); poison-dns is said through dnsPoisoning, never as a rule.
  @Test func everyCensorActionIsParsedAndReachesTheSandbox() throws {
    for action in CensorAction.allCases {
      let text = Self.scenarioText(actions: #"[{"at": 0, "do": "start"}]"#).replacingOccurrences(
        of: #""tor": {"personality": "arti", "bootstrap": "healthy"},"#,
        with: #""tor": {"personality": "arti", "bootstrap": "healthy"}, "network": {"censor": "#
          + #"[{"action": "\#(action.rawValue)", "to": "dns-resolver", "protocol": "tcp"}]},"#)
      if action.isScenarioRule {
        let scenario = try ScenarioParser.parse(text, file: "t.json")
        let rules = SandboxMapping.censorRules(scenario.network, at: 0)
        #expect(!rules.isEmpty && rules.allSatisfy { $0.action == action }, "\(action)")
      } else {
        #expect(throws: ScenarioError.self) { try ScenarioParser.parse(text, file: "t.json") }
      }
    }
  }

  /// An event added to the catalogue is accepted by patterns and listed in the guide; the same
  /// name without the entry is an unknown event (the canary).
  @Test func anEventAddedToTheCatalogueIsAcceptedAndListed() {
    let beep = ScenarioEventKind("test-beep", ["pitch"], emittedBy: .all)
    let kinds = ScenarioEventCatalogue.all + [beep]
    #expect(
      ScenarioEventCatalogue.problem(in: EventPattern("test-beep pitch=3"), kinds: kinds) == nil)
    #expect(
      ScenarioEventCatalogue.problem(
        in: EventPattern("test-beep pitch=3"), profile: .onionBrowser3, kinds: kinds) == nil)
    #expect(
      ScenarioEventCatalogue.problem(in: EventPattern("test-beep tone=3"), kinds: kinds)?
        .contains("has no field \"tone\"") == true)
    #expect(ScenarioEventCatalogue.guideTable(of: kinds).contains("| `test-beep` | `pitch` |"))
    #expect(
      ScenarioEventCatalogue.problem(in: EventPattern("test-beep"))?.hasPrefix("unknown event")
        == true)
  }

  /// Each name is declared once, and the names code refers to are in the list.
  @Test func theCatalogueNamesEachEventOnce() {
    let names = ScenarioEventCatalogue.names
    #expect(Set(names).count == names.count)
    for kind in [
      ScenarioEventKind.torWillStart, .readyChanged, .requestSent, .torCrashed, .censorChanged,
    ] {
      #expect(ScenarioEventCatalogue.all.contains(kind), "\(kind.name)")
    }
    #expect(
      ScenarioParser.notificationNames
        == [
          "TorWillStart", "TorDidBecomeReady", "TorWillRestart", "TorBootstrapDidStall",
          "TorUserPreferenceChanged",
        ])
  }
}
