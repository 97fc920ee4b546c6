import Foundation
import Testing

@testable import Lanes
@testable import Scenarios

/// A valid minimal scenario with `expect` replaced by the given JSON.
func scenarioText(expect: String = #"[{"kind": "no-leak"}]"#, app: String? = nil) -> String {
  """
  {
    "title": "t",
    "proves": "p",
    "duration": 90,
    "tor": {"personality": "arti", "bootstrap": "never"},
    "app": \(app ?? #"{"profile": "bitchat", "actions": [{"at": 0, "do": "start"}]}"#),
    "expect": \(expect)
  }
  """
}

@Suite struct ScenarioParserTests {
  @Test func anErrorNamesTheFileTheFieldAndWhatWasExpected() {
    let text = scenarioText(
      expect: """
        [{"kind": "no-leak"}, {"kind": "no-leak"},
         {"kind": "notification", "name": "TorBootstrapDidStall", "by": "soon"}]
        """)
    #expect(throws: ScenarioError.self) { try ScenarioParser.parse(text, file: "Scenarios/x.json") }
    do {
      _ = try ScenarioParser.parse(text, file: "Scenarios/x.json")
    } catch {
      #expect(
        error.description
          == #"Scenarios/x.json: expect[2].by: expected a number of seconds, got "soon""#)
    }
  }

  @Test(arguments: [
    (
      #"[{"kind": "notification", "name": "TorBootstrapDidStall", "bye": 75}]"#,
      #"expect[0].bye: unknown field (did you mean "by"?) (expected one of: kind, because, name, by, count)"#
    ),
    (#"[{"kind": "notification", "name": "TorBootstrapDidStall"}]"#, #"expect[0]: missing "by""#),
    (
      #"[{"kind": "leak-caught", "classes": ["dns", "smtp"]}]"#,
      "expect[0].classes[1]: expected a leak class"
    ),
    (#"[{"kind": "leak-caught", "classes": []}]"#, "expect[0].classes: expected at least 1"),
    (#"[{"kind": "teleport"}]"#, #"expect[0].kind: expected one of "no-leak""#),
    (
      #"[{"kind": "proxy-mode", "mode": "vpn", "at": 3}]"#,
      #"expect[0].mode: expected one of "tor", "direct", got "vpn""#
    ),
    (#"[]"#, "expect: expected at least 1 expectations, got 0"),
    (
      #"[{"kind": "notification", "name": "TorDidBecomeReady", "by": -1}]"#,
      "expect[0].by: expected a number of seconds, got -1"
    ),
    (
      #"[{"kind": "notification", "name": "TorDidBecomeReady", "by": 5, "count": 1.5}]"#,
      "expect[0].count: expected a number of times"
    ),
  ])
  func badExpectationsAreNamedByPath(expect: String, message: String) {
    let error = parseError(scenarioText(expect: expect))
    #expect(error?.description.contains(message) == true, "\(String(describing: error))")
  }

  @Test(arguments: [
    (
      #"{"profile": "bitchat", "actions": [{"at": 0, "do": "set-preference"}]}"#,
      #"app.actions[0]: missing "enabled""#
    ),
    (
      #"{"profile": "bitchat", "actions": [{"at": 0, "do": "start", "url": "x"}]}"#,
      "app.actions[0].url: unknown field"
    ),
    (
      #"{"profile": "bitchat", "actions": [{"at": 95, "do": "start"}]}"#,
      "app.actions[0].at: 95 s is after the end of the run (duration 90 s)"
    ),
    (
      #"{"profile": "iphone", "actions": [{"at": 0, "do": "start"}]}"#,
      #"app.profile: expected one of "bitchat", "hardened", "naive-port", "onion-browser-1", "#
        + #""onion-browser-2", "onion-browser-3", "onion-browser", "bitchat-source", "program", "#
        + #"got "iphone""#
    ),
    (
      #"{"profile": "bitchat", "torPreference": 1, "actions": [{"at": 0, "do": "start"}]}"#,
      "app.torPreference: expected true or false, got 1"
    ),
    (#"{"profile": "bitchat", "actions": []}"#, "app.actions: expected at least 1 actions, got 0"),
  ])
  func badAppSectionsAreNamedByPath(app: String, message: String) {
    let error = parseError(scenarioText(app: app))
    #expect(error?.description.contains(message) == true, "\(String(describing: error))")
  }

  @Test func syntaxErrorsNameTheLineAndColumn() {
    let error = parseError("{\n  \"title\": \"t\",\n  \"proves\" \"p\"\n}")
    #expect(
      error?.description
        == "f.json: not valid JSON: line 3 column 12: expected ':' after \"proves\"")
    #expect(
      parseError(#"{"title": "a", "title": "b"}"#)?.message.contains("duplicate member") == true)
    #expect(parseError("[1, 2")?.message.contains("expected ',' or ']'") == true)
  }

  @Test func aBadBootstrapPlanIsRejectedAndGoodOnesPass() {
    for plan in [
      "healthy", "healthy:5", "healthy:65.5", "never", "stall:conn", "stall:conn_done:timeout",
      "flap:10", "crash:30",
    ] {
      let text = scenarioText().replacingOccurrences(of: "\"never\"", with: "\"\(plan)\"")
      #expect(parseError(text) == nil, "\(plan)")
    }
    let text = scenarioText().replacingOccurrences(of: "\"never\"", with: "\"sometimes\"")
    #expect(parseError(text)?.path == "tor.bootstrap")
  }

  @Test func actionsAreSortedByTimeKeepingTheWrittenOrderAtEqualTimes() throws {
    let app = """
      {"profile": "bitchat", "actions": [
        {"at": 20, "do": "revoke-activation"}, {"at": 0, "do": "start"},
        {"at": 20, "do": "refresh-directory"}, {"at": 5, "do": "set-preference", "enabled": false}]}
      """
    let scenario = try ScenarioParser.parse(scenarioText(app: app), file: "Scenarios/a-b.json")
    #expect(scenario.name == "a-b")
    #expect(
      scenario.app.actions.map(\.step) == [
        .start, .setPreference(enabled: false), .revokeActivation, .refreshDirectory,
      ])
  }

  @Test func onionBrowserScenariosTakeOpenURLAndNeedTheControlPort() throws {
    let ctor = #"{"personality": "ctor", "bootstrap": "healthy:10"}"#
    func text(tor: String, app: String) -> String {
      scenarioText(app: app).replacingOccurrences(
        of: #""tor": {"personality": "arti", "bootstrap": "never"}"#, with: #""tor": \#(tor)"#)
    }
    let good = text(
      tor: ctor,
      app: """
        {"profile": "onion-browser", "actions": [{"at": 0, "do": "start"},
          {"at": 2, "do": "open-url", "url": "onionbrowser://example.com/"}]}
        """)
    let scenario = try ScenarioParser.parse(good, file: "f.json")
    #expect(scenario.app.profile == .onionBrowser)
    #expect(
      scenario.app.actions.map(\.step) == [.start, .openURL(url: "onionbrowser://example.com/")])
    #expect(
      ScenarioCommandLines.actionsFile(scenario).split(separator: "\n").map(String.init) == [
        #"{"at": 0, "action": "start"}"#,
        #"{"at": 2, "action": "open-url", "url": "onionbrowser://example.com/"}"#,
        #"{"at": 90, "action": "wait", "seconds": 0}"#,
      ])
    let cases: [(String, String, String)] = [
      (
        #"{"personality": "arti", "bootstrap": "never"}"#,
        #"{"profile": "onion-browser", "actions": [{"at": 0, "do": "start"}]}"#,
        #"f.json: app.profile: onion-browser drives tor through its control port: on the mock lane it needs "personality": "ctor""#
      ),
      (
        ctor,
        #"{"profile": "onion-browser", "actions": [{"at": 0, "do": "send-message"}]}"#,
        #"f.json: app.actions[0].do: "send-message" is not modelled for the onion-browser profile (its verbs: start, foreground, background, path-change, open-url, tor-crash)"#
      ),
      (
        ctor,
        #"{"profile": "bitchat", "actions": [{"at": 0, "do": "open-url", "url": "onionbrowser://x/"}]}"#,
        #"f.json: app.actions[0].do: "open-url" needs an onion-browser profile"#
      ),
      (
        ctor,
        #"{"profile": "onion-browser", "actions": [{"at": 0, "do": "open-url"}]}"#,
        #"f.json: app.actions[0]: missing "url": expected a non-empty string"#
      ),
    ]
    for (tor, app, message) in cases {
      #expect(parseError(text(tor: tor, app: app))?.description == message, "\(app)")
    }
  }

  @Test func everyLibraryScenarioParsesAndTheLibraryCoversTheIssue() throws {
    let loaded = ScenarioLoader.load([scenariosDirectory])
    #expect(loaded.count >= 18)
    var names: Set<String> = []
    for item in loaded {
      switch item.result {
      case .success(let scenario):
        names.insert(scenario.name)
        #expect(!scenario.proves.isEmpty)
      case .failure(let error):
        Issue.record("\(error)")
      }
    }
    #expect(names.count == loaded.count)
    for required in [
      "healthy-baseline", "relays-dropped-stall-at-conn", "relays-reset-connect-refused",
      "tls-dropped-after-handshake", "stall-past-75s", "socks-listener-late-weakness-1",
      "preference-off-users-choice", "preference-off-mid-flight",
      "activation-revoked-while-ready-weakness-2", "background-and-foreground",
      "path-change-and-restart", "tor-crash-mid-session", "dns-poisoning-at-censor",
      "onion-relay-weakness-3", "custom-relay-cap", "directory-refresh-while-not-ready",
      "naive-port-canary", "activation-revoked-while-ready-hardened",
      // Onion Browser: each version's rule for what loads before tor is ready, for the
      // background and for the stall guard, on the mock lane; each version on the real lane.
      "onion-browser-1-url-held-until-ready", "onion-browser-2-url-loads-while-tor-starts",
      "onion-browser-3-url-cancelled-until-ready",
      "onion-browser-1-background-before-connect-exits",
      "onion-browser-2-background-shuts-tor-down", "onion-browser-3-background-keeps-tor",
      "onion-browser-2-stall-cycles-disable-network", "onion-browser-3-stall-no-guard",
      "real-onion-browser-1", "real-onion-browser-2", "real-onion-browser-3",
    ] {
      #expect(names.contains(required), "\(required)")
    }
  }

  @Test func aMalformedFileDoesNotStopTheOthers() throws {
    let dir = try makeTemporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    try scenarioText().write(toFile: dir + "/a-good.json", atomically: true, encoding: .utf8)
    try "{ not json".write(toFile: dir + "/b-bad.json", atomically: true, encoding: .utf8)
    try scenarioText().write(toFile: dir + "/c-good.json", atomically: true, encoding: .utf8)
    try "{}".write(toFile: dir + "/x.schema.json", atomically: true, encoding: .utf8)
    let loaded = ScenarioLoader.load([dir, dir + "/missing.json"])
    #expect(
      loaded.map { ($0.file as NSString).lastPathComponent } == [
        "a-good.json", "b-bad.json", "c-good.json", "missing.json",
      ])
    #expect((try? loaded[0].result.get()) != nil)
    #expect((try? loaded[2].result.get()) != nil)
    if case .failure(let error) = loaded[1].result {
      #expect(error.description.hasPrefix(dir + "/b-bad.json: not valid JSON: line 1 column 3"))
    } else {
      Issue.record("b-bad.json loaded")
    }
    if case .failure(let error) = loaded[3].result {
      #expect(error.message == "cannot read the file")
    } else {
      Issue.record("missing.json loaded")
    }
  }

  private func parseError(_ text: String) -> ScenarioError? {
    do {
      _ = try ScenarioParser.parse(text, file: "f.json")
      return nil
    } catch {
      return error
    }
  }
}
