import Foundation
import Testing

@testable import Scenarios

/// A mock-lane scenario with the given parts, for typo tests.
private func typoScenario(
  duration: String = "20", extra: String = "", bootstrap: String = "healthy:5",
  network: String? = nil, actions: String = #"[{"at": 0, "do": "start"}]"#,
  expect: String = #"[{"kind": "no-leak"}]"#
) -> String {
  """
  {
    "title": "t", "proves": "p", "duration": \(duration), \(extra)
    "tor": {"personality": "ctor", "bootstrap": "\(bootstrap)"},
    \(network.map { #""network": \#($0),"# } ?? "")
    "app": {"profile": "bitchat", "actions": \(actions)},
    "expect": \(expect)
  }
  """
}

private func error(_ text: String) -> String? {
  do {
    _ = try ScenarioParser.parse(text, file: "Scenarios/typo.json")
    return nil
  } catch {
    return error.description
  }
}

/// Every typo issue 20 found turning a scenario into a silent no-op is now an error naming the
/// file and the field, with a "did you mean" where a known name is close.
@Suite struct ScenarioTypoTests {
  @Test(arguments: [
    (
      #"{"censor": [{"action": "reset", "to": "tor-guard"}]}"#,
      #"Scenarios/typo.json: network.censor[0].to: "tor-guard" is not a target of this sandbox (did you mean "tor-guards"?)"#
    ),
    (
      #"{"censor": [{"action": "drop", "to": "relay.damus.com", "port": 443}]}"#,
      #"network.censor[0].to: "relay.damus.com" is not a target of this sandbox (did you mean "relay.damus.io"?)"#
    ),
    (
      #"{"censor": [{"action": "drop", "to": "10.66.1.10"}]}"#,
      #"network.censor[0].to: "10.66.1.10" is an address: targets are names, not addresses"#
    ),
    (
      #"{"censor": [{"action": "drop", "to": "tor-relays"}]}"#,
      #"network.censor[0].to: "tor-relays" is a real-Tor lane target"#
    ),
    (
      #"{"dnsPoisoning": [{"name": "nos.lo"}]}"#,
      #"network.dnsPoisoning[0].name: "nos.lo" is not a name the app asks for, so poisoning it changes nothing (did you mean "nos.lol"?)"#
    ),
    (
      #"{"censor": [{"action": "drop", "to": "any", "port": 443, "from": 30}]}"#,
      #"network.censor[0].from: 30 s is after the end of the run (duration 20 s)"#
    ),
    (
      #"{"censor": [{"action": "drop", "to": "any", "port": 443, "until": 25}]}"#,
      #"network.censor[0].until: 25 s is after the end of the run"#
    ),
    (
      #"{"censor": [{"acton": "drop", "to": "any"}]}"#,
      #"network.censor[0].acton: unknown field (did you mean "action"?)"#
    ),
  ])
  func censorTargetsAndTimesAreChecked(network: String, message: String) {
    let found = error(typoScenario(network: network))
    #expect(found?.contains(message) == true, "\(found ?? "no error")")
  }

  @Test func theWorldsHostNamesAndTheScenariosOwnAreTargets() {
    #expect(
      error(
        typoScenario(
          network: #"{"censor": [{"action": "drop", "to": "relay.damus.io", "port": 443}]}"#))
        == nil)
    #expect(
      error(
        typoScenario(
          network: #"{"censor": [{"action": "drop", "to": "relay1.example.org"}]}"#,
          actions:
            #"[{"at": 0, "do": "start"}, {"at": 1, "do": "add-relay", "url": "wss://relay1.example.org"}]"#
        )) == nil)
  }

  @Test(arguments: [
    (
      #"[{"kind": "no-event", "event": "socket-opend transport=direct"}]"#,
      #"expect[0].event: unknown event "socket-opend" (did you mean "socket-opened"?)"#
    ),
    (
      #"[{"kind": "no-event", "event": "socket-opened transprt=direct"}]"#,
      #"expect[0].event: "socket-opened" has no field "transprt" (did you mean "transport"?)"#
    ),
    (
      #"[{"kind": "event", "event": "request-snt", "by": 10}]"#,
      #"expect[0].event: unknown event "request-snt" (did you mean "request-sent"?)"#
    ),
    (
      #"[{"kind": "events-in-order", "events": ["TorWillStart", "TorDidBecomeRedy"]}]"#,
      #"expect[0].events[1]: unknown event "TorDidBecomeRedy" (did you mean "TorDidBecomeReady"?)"#
    ),
    (
      #"[{"kind": "events-in-order", "events": ["TorWillStart", "proxy-mode usetor=true"]}]"#,
      #"expect[0].events[1]: "proxy-mode" has no field "usetor" (did you mean "useTor"?)"#
    ),
    (
      #"[{"kind": "notification", "name": "TorDidBecomeReady", "by": 10000}]"#,
      #"expect[0].by: 10000 s is after the end of the run (duration 20 s)"#
    ),
    (
      #"[{"kind": "no-notification", "name": "TorDidBecomeReady", "before": 21}]"#,
      #"expect[0].before: 21 s is after the end of the run"#
    ),
    (
      #"[{"kind": "proxy-mode", "mode": "tor", "at": 60}]"#,
      #"expect[0].at: 60 s is after the end of the run"#
    ),
    (
      #"[{"kind": "no-leek"}]"#,
      #"expect[0].kind: expected one of "#
    ),
    (
      #"[{"kind": "notification", "name": "TorDidBecomeReddy", "by": 10}]"#,
      #"(did you mean "TorDidBecomeReady"?)"#
    ),
  ])
  func patternsAndTimesInExpectationsAreChecked(expect: String, message: String) {
    let found = error(typoScenario(expect: expect))
    #expect(found?.contains(message) == true, "\(found ?? "no error")")
  }

  @Test func aMisspeltKindSuggestsTheKnownOne() {
    let found = error(typoScenario(expect: #"[{"kind": "no-leek"}]"#))
    #expect(found?.hasSuffix(#"got "no-leek" (did you mean "no-leak"?)"#) == true, "\(found ?? "")")
  }

  @Test func aDurationInMillisecondsNeedsAnExplicitOptIn() {
    let found = error(typoScenario(duration: "20000"))
    #expect(
      found?.contains("Scenarios/typo.json: duration: 20000 s is unusually long") == true,
      "\(found ?? "no error")")
    #expect(found?.contains(#"add "longRun": true"#) == true)
    #expect(error(typoScenario(duration: "20000", extra: #""longRun": true,"#)) == nil)
    #expect(error(typoScenario(duration: "600")) == nil)
  }

  @Test(arguments: [
    (
      #"[{"at": 0, "action": "start"}]"#,
      #"app.actions[0].action: scenario files spell it "do""#
    ),
    (
      #"[{"at": 0, "do": "start"}, {"at": 1, "do": "set-preference", "value": false}]"#,
      #"app.actions[1].value: unknown field: scenario files spell it "enabled""#
    ),
    (
      #"[{"at": 0, "do": "strat"}]"#,
      #"(did you mean "start"?)"#
    ),
  ])
  func theAppDriversSpellingsAreNamed(actions: String, message: String) {
    let found = error(typoScenario(actions: actions))
    #expect(found?.contains(message) == true, "\(found ?? "no error")")
  }

  @Test(arguments: [
    // The issue's case: a reset guard and a plan that reaches 100% anyway.
    ("healthy:5", #"{"censor": [{"action": "reset", "to": "tor-guards"}]}"#, "reaches 100% at 5 s"),
    ("flap:10", #"{"censor": [{"action": "drop", "to": "any", "protocol": "tcp"}]}"#, "100%"),
    (
      "stall:loading_descriptors",
      #"{"censor": [{"action": "drop", "to": "tor-guards"}]}"#,
      "tor cannot get past 5% through that block, the plan stalls at 50%"
    ),
    (
      "stall:conn:refused",
      #"{"censor": [{"action": "drop", "to": "tor-guards"}]}"#,
      "a drop makes tor report TIMEOUT, the plan reports CONNECTREFUSED"
    ),
    (
      "stall:conn:timeout",
      #"{"censor": [{"action": "drop", "to": "tor-guards", "until": 10}]}"#,
      "the block is lifted at 10 s but the stall never ends"
    ),
    (
      "stall:conn:timeout:5",
      #"{"censor": [{"action": "drop", "to": "tor-guards", "until": 10}]}"#,
      "the stall ends at 5 s while the guard is still blocked"
    ),
  ])
  func aPlanThatContradictsTheCensorIsRejected(plan: String, network: String, message: String) {
    let found = error(typoScenario(bootstrap: plan, network: network))
    #expect(
      found?.contains(
        "Scenarios/typo.json: tor.bootstrap: \"\(plan)\" contradicts censor rule "
          + "network.censor[0]") == true, "\(found ?? "no error")")
    #expect(found?.contains(message) == true, "\(found ?? "no error")")
    #expect(found?.contains("a plan that agrees: \"stall:conn") == true)
  }

  @Test(arguments: [
    ("stall:conn:refused", #"{"censor": [{"action": "reset", "to": "tor-guards"}]}"#),
    ("stall:conn:timeout", #"{"censor": [{"action": "drop", "to": "tor-guards"}]}"#),
    (
      "stall:conn:timeout:10", #"{"censor": [{"action": "drop", "to": "tor-guards", "until": 10}]}"#
    ),
    (
      "stall:conn_done:timeout",
      #"{"censor": [{"action": "drop", "to": "tor-guards", "longerThan": 200}]}"#
    ),
    ("healthy:5", #"{"censor": [{"action": "drop", "to": "tor-guards", "until": 3}]}"#),
    ("healthy:5", #"{"censor": [{"action": "drop", "to": "tor-guards", "from": 10}]}"#),
    ("healthy:5", #"{"censor": [{"action": "drop", "to": "any", "port": 443}]}"#),
    ("never", #"{"censor": [{"action": "drop", "to": "any"}]}"#),
  ])
  func aPlanThatAgreesWithTheCensorPasses(plan: String, network: String) {
    #expect(error(typoScenario(bootstrap: plan, network: network)) == nil)
  }

  @Test func anEventTheProfileNeverEmitsIsAnError() {
    let onion = """
      {"title": "t", "proves": "p", "duration": 20,
       "tor": {"personality": "ctor", "bootstrap": "healthy:5"},
       "app": {"profile": "onion-browser", "actions": [{"at": 0, "do": "start"}]},
       "expect": [{"kind": "event", "event": "TorDidBecomeReady", "by": 10}]}
      """
    #expect(
      error(onion)?.contains(
        #"expect[0].event: the onion-browser profile never emits "TorDidBecomeReady""#) == true)
    let bitchat = typoScenario(expect: #"[{"kind": "no-event", "event": "request-held"}]"#)
    #expect(
      error(bitchat)?.contains(#"the bitchat profile never emits "request-held""#) == true,
      "\(error(bitchat) ?? "no error")")
  }

  @Test func theEventCatalogueSuggestsOnlyCloseNames() {
    #expect(
      NameSuggestion.closest(to: "socket-opend", in: ScenarioEventCatalogue.names)
        == "socket-opened")
    #expect(NameSuggestion.closest(to: "teleported", in: ScenarioEventCatalogue.names) == nil)
    #expect(NameSuggestion.editDistance("transprt", "transport") == 1)
    #expect(NameSuggestion.editDistance("tor-guadrs", "tor-guards") == 1)
  }
}

/// The guide documents every event and field a pattern may use: its table is the catalogue's.
@Suite struct EventCatalogueGuideTests {
  @Test func theGuidesEventTableIsTheCatalogue() throws {
    let guide = try String(contentsOfFile: scenariosDirectory + "/README.md", encoding: .utf8)
    #expect(
      guide.contains(ScenarioEventCatalogue.guideTable),
      "Scenarios/README.md must carry this table:\n\(ScenarioEventCatalogue.guideTable)")
  }

  @Test func everyTargetIsInTheGuide() throws {
    let guide = try String(contentsOfFile: scenariosDirectory + "/README.md", encoding: .utf8)
    for target in CensorTarget.symbolic {
      #expect(guide.contains("| `\(target)` |"), "\(target)")
    }
    for host in ScenarioParser.knownHosts(AppPlan(profile: .bitchat, actions: [])) {
      #expect(guide.contains("`\(host)`"), "\(host)")
    }
  }
}

/// Every name in every library file, misspelt one at a time, makes the file an error: censor
/// targets, poisoned names, notification names, event names and their field keys. (Values of
/// pattern fields are free text and stay unchecked.)
@Suite struct LibraryTypoTests {
  @Test func everyNameInTheLibraryIsCheckedWhenMisspelt() throws {
    let regex = try Regex(#""(to|name|event)": "([^"]+)""#)
    var tried = 0
    for file in try ScenarioLoader.scenarioFiles(in: scenariosDirectory) {
      let text = try String(contentsOfFile: file, encoding: .utf8)
      for match in text.matches(of: regex) {
        guard let valueRange = match.output[2].range else { continue }
        var typos = ["x" + text[valueRange]]
        // A pattern's field key too: "tor-problem reason=no-progress" -> "reasonx=".
        if let eq = text[valueRange].firstIndex(of: "="),
          let space = text[valueRange].firstIndex(of: " "),
          space < eq
        {
          typos.append(String(text[valueRange][..<eq]) + "x" + String(text[valueRange][eq...]))
        }
        for typo in typos {
          var broken = text
          broken.replaceSubrange(valueRange, with: typo)
          tried += 1
          #expect(throws: ScenarioError.self, "\(file): \"\(typo)\" was accepted") {
            _ = try ScenarioParser.parse(broken, file: file)
          }
        }
      }
    }
    #expect(tried >= 50, "only \(tried) names tried")
  }
}
