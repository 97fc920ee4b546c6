import FailClosedSupport
import Foundation
import Testing

@testable import SystemUnderTest

@Suite struct AppDriverTests {
  @Test func parsesJSONLinesAndArrays() throws {
    let lines = """
      # comment
      {"at": 0, "action": "start"}
      {"action": "set-preference", "value": "off"}
      {"action": "path-change", "status": "unsatisfied"}
      {"action": "add-relay", "url": "wss://r.example"}
      {"action": "wait", "seconds": 2.5}
      """
    let actions = try AppAction.parseFile(lines, name: "a.jsonl")
    #expect(
      actions == [
        AppAction(at: 0, .start), AppAction(.setPreference(enabled: false)),
        AppAction(.pathChange(satisfied: false)), AppAction(.addRelay(url: "wss://r.example")),
        AppAction(.wait(seconds: 2.5)),
      ])
    let array = try AppAction.parseFile(
      #"[{"action":"refresh-directory"},{"action":"send-message","text":"hi"}]"#, name: "b")
    #expect(array == [AppAction(.refreshDirectory), AppAction(.sendMessage(text: "hi"))])
  }

  @Test(arguments: [
    (#"{"action": "fly"}"#, "a:1: unknown action 'fly'"),
    (#"{"action": "set-preference", "value": "maybe"}"#, "a:1: field 'value'"),
    (#"{"action": "wait"}"#, "a:1: action 'wait' needs"),
    (#"{"at": -1, "action": "start"}"#, "a:1: field 'at'"),
    ("\n\nnot json", "a:3: not a JSON object"),
    (#"{"action": "add-relay"}"#, "a:1: action 'add-relay' needs a string field 'url'"),
  ])
  func errorsNameTheLineAndField(text: String, expected: String) {
    #expect {
      _ = try AppAction.parseFile(text, name: "a")
    } throws: { error in
      "\(error)".hasPrefix(expected)
    }
  }

  @Test func eventsRoundTripThroughJSONLines() throws {
    let event = AppEvent(
      time: 75.25, kind: .notification,
      fields: ["name": "TorUserPreferenceChanged", "enabled": false, "n": 3, "x": 1.5])
    let line = event.jsonLine
    #expect(line.hasPrefix(#"{"t":75.250,"type":"notification","#))
    #expect(try AppEvent(jsonLine: line) == event)
  }

  /// A simulated run on virtual time: a stall is reported once, nothing is queued to
  /// the network, and the preference switch goes direct.
  @Test func simulatedRunReportsTheStall() async throws {
    var options = AppDriver.Options()
    options.backend = .simulated
    options.bootstrapSeconds = nil
    let collected = EventCollector()
    let clock = ManualClock()
    // Going direct after the switch must not resolve public names from the host: the relays
    // and the directory are on loopback here (connection refused).
    options.relays = ["wss://localhost:9"]
    options.directoryURL = "https://localhost:9/relays.csv"
    let (recorded, recording) = AsyncStream<AppEvent>.makeStream()
    let run = Task {
      try await AppDriver.run(
        actions: [
          AppAction(at: 0, .start), AppAction(.sendMessage(text: "hello")),
          AppAction(at: 95, .setPreference(enabled: false)), AppAction(.wait(seconds: 1)),
        ], options: options, clock: clock,
        sink: {
          collected.add($0)
          recording.yield($0)
        })
    }
    // The driver's set-up (the system trust store) takes real time and fixes its origin on the
    // virtual clock after it: advancing before its first action would move time past every
    // action before the driver reads it, and the run would wait forever (it did, run alone).
    var recordedSoFar = recorded.makeAsyncIterator()
    while let event = await recordedSoFar.next(), event["action"] != "start" {}
    // Virtual time moves in half-second steps while the driver runs (bounded).
    for _ in 0..<2000 where !collected.events.contains(where: { $0["action"] == "end" }) {
      await Self.advance(clock)
      for _ in 0..<8 { await Task.yield() }
    }
    try await run.value
    let events = collected.events
    let names = events.filter { $0.kind == .notification }.map { $0["name"]?.description ?? "" }
    #expect(names.filter { $0 == "TorBootstrapDidStall" }.count == 1)
    #expect(names.contains("TorUserPreferenceChanged"))
    #expect(events.contains { $0.kind == .message && $0["phase"] == "queued" })
    // No socket to anywhere before the switch: the simulated backend has no SOCKS port.
    let switchedAt = events.first { $0["field"] == "proxyMode" }?.time ?? 0
    #expect(!events.contains { $0.kind == .socket && $0.time < switchedAt })
    // The driver's last action is its end. (The app's own timers, relays going direct after
    // the switch, may still fire in the same half-second step of virtual time.)
    #expect(events.last { $0.kind == .action }?["action"] == "end")
    #expect(events.filter { $0["action"] == "end" }.count == 1)
  }
}

extension AppDriverTests {
  @AppActor static func advance(_ clock: ManualClock) { clock.advanceTimers(by: 0.5) }
}

final class EventCollector: @unchecked Sendable {
  private let lock = NSLock()
  private var list: [AppEvent] = []
  func add(_ event: AppEvent) { lock.withLock { list.append(event) } }
  var events: [AppEvent] { lock.withLock { list } }
}
