import Audit
import Testing

@testable import Scenarios

/// A scenario with the given expectations and plan, and outcomes built from parts.
func makeScenario(
  _ expectations: [ScenarioExpectation], preference: Bool = true, actions: [AppAction] = [],
  name: String = "s"
) -> Scenario {
  Scenario(
    name: name, path: "Scenarios/\(name).json", title: "title of \(name)",
    proves: "what \(name) proves", duration: 90,
    tor: TorPlan(personality: .arti, bootstrap: "healthy:5"),
    app: AppPlan(
      profile: .bitchat, torPreference: preference,
      actions: [AppAction(at: 0, step: .start)] + actions),
    expectations: expectations)
}

func makeOutcome(
  events: [ScenarioEvent] = [], bootstrap: [BootstrapSample] = [], leaks: [ScenarioLeak] = [],
  audit: Verdict? = nil, traffic: [TrafficSample] = [], runError: String? = nil
) -> ScenarioOutcome {
  ScenarioOutcome(
    events: events, bootstrap: bootstrap,
    audit: CaptureAudit(
      verdict: audit ?? (leaks.isEmpty ? .pass : .leak),
      inconclusiveReasons: audit == .inconclusive ? ["pcap_stats ps_drop 3"] : [], leaks: leaks,
      traffic: traffic),
    capture: CaptureStats(
      packets: 40, dropped: audit == .inconclusive ? 3 : 0, positiveControlSeen: true),
    runError: runError, wallSeconds: 1.2)
}

func leak(_ c: LeakClass, at t: Double, names: [String] = []) -> ScenarioLeak {
  ScenarioLeak(
    leakClass: c, destination: c == .dns ? "10.200.2.2:53" : "10.200.2.9:443",
    transport: c == .dns ? "udp" : "tcp", names: names, firstTime: t, lastTime: t + 1, packets: 3,
    bytes: 180)
}

func ev(_ t: Double, _ name: String, _ fields: [String: String] = [:]) -> ScenarioEvent {
  ScenarioEvent(time: t, name: name, fields: fields)
}

@Suite struct ExpectationJudgeTests {
  func status(
    _ e: ScenarioExpectation, _ o: ScenarioOutcome, preference: Bool = true,
    actions: [AppAction] = []
  )
    -> ExpectationResult
  {
    ExpectationJudge.judge(makeScenario([e], preference: preference, actions: actions), o)
      .expectations[0]
  }

  @Test func noLeakIsMetOnACleanCaptureFailedOnALeakAndUndecidedOnADroppyOne() {
    #expect(status(.noLeak, makeOutcome()).status == .met)
    let failed = status(.noLeak, makeOutcome(leaks: [leak(.dns, at: 12, names: ["nos.lol"])]))
    #expect(failed.status == .failed)
    #expect(failed.reason == "dns to 10.200.2.2:53 (nos.lol) at 12 s")
    #expect(status(.noLeak, makeOutcome(audit: .inconclusive)).status == .inconclusive)
    // A leak seen in a droppy capture is still a leak.
    #expect(
      status(.noLeak, makeOutcome(leaks: [leak(.tcp, at: 1)], audit: .inconclusive)).status
        == .failed)
  }

  @Test func aCanaryPassesWhenItsLeakIsCaughtAndFailsWhenTheDetectorIsSilent() {
    let canary = makeScenario([.leakCaught(classes: [.dns, .tcp])])
    let caught = ExpectationJudge.judge(
      canary, makeOutcome(leaks: [leak(.dns, at: 10), leak(.tcp, at: 10.1)]))
    #expect(caught.verdict == .pass)
    #expect(caught.expectations[0].status == .met)
    #expect(caught.leaks.count == 2)
    let half = ExpectationJudge.judge(canary, makeOutcome(leaks: [leak(.dns, at: 10)]))
    #expect(half.verdict == .failed)
    #expect(half.expectations[0].reason == "no tcp leak caught: the detector did not fire")
    let droppy = ExpectationJudge.judge(canary, makeOutcome(audit: .inconclusive))
    #expect(droppy.verdict == .inconclusive)
  }

  @Test func requestsQueuedBeforeReady() {
    let good = makeOutcome(events: [
      ev(0, "TorWillStart"), ev(10, "request-queued", ["kind": "message"]),
      ev(12, "TorDidBecomeReady"), ev(12.1, "request-sent", ["transport": "tor"]),
    ])
    #expect(status(.requestsQueuedBeforeReady, good).status == .met)
    let early = makeOutcome(events: [
      ev(10, "request-queued"), ev(11, "request-sent", ["transport": "tor", "kind": "message"]),
      ev(12, "TorDidBecomeReady"),
    ])
    let result = status(.requestsQueuedBeforeReady, early)
    #expect(result.status == .failed)
    #expect(result.reason == "request sent at 11 s (message) while Tor was not ready")
    let afterBackground = makeOutcome(events: [
      ev(5, "TorDidBecomeReady"), ev(20, "ready-changed", ["isReady": "false"]),
      ev(25, "request-sent", ["transport": "tor"]),
    ])
    #expect(status(.requestsQueuedBeforeReady, afterBackground).status == .failed)
    #expect(status(.requestsQueuedBeforeReady, makeOutcome()).status == .failed)
    // Direct sends after the user turned Tor off are the user's choice.
    let userOff = makeOutcome(events: [
      ev(1, "request-queued"), ev(20, "TorUserPreferenceChanged", ["enabled": "false"]),
      ev(21, "request-sent", ["transport": "direct"]),
    ])
    #expect(status(.requestsQueuedBeforeReady, userOff).status == .met)
  }

  @Test func notificationByATimeAndExactlyNTimes() {
    let stall = ScenarioExpectation.notification(name: "TorBootstrapDidStall", by: 75, count: 1)
    #expect(status(stall, makeOutcome(events: [ev(75, "TorBootstrapDidStall")])).status == .met)
    let late = status(stall, makeOutcome(events: [ev(76.04, "TorBootstrapDidStall")]))
    #expect(late.status == .failed)
    #expect(late.reason == "TorBootstrapDidStall first posted at 76 s, after 75 s")
    let twice = status(
      stall, makeOutcome(events: [ev(75, "TorBootstrapDidStall"), ev(80, "TorBootstrapDidStall")]))
    #expect(twice.reason == "TorBootstrapDidStall posted 2 times (at 75 s, 80 s), expected 1")
    #expect(status(stall, makeOutcome()).status == .failed)
  }

  @Test func noNotification() {
    let e = ScenarioExpectation.noNotification(name: "TorDidBecomeReady", before: 60)
    #expect(status(e, makeOutcome(events: [ev(65, "TorDidBecomeReady")])).status == .met)
    #expect(status(e, makeOutcome(events: [ev(59, "TorDidBecomeReady")])).status == .failed)
    let never = ScenarioExpectation.noNotification(name: "TorDidBecomeReady", before: nil)
    #expect(status(never, makeOutcome(events: [ev(89, "TorDidBecomeReady")])).status == .failed)
  }

  @Test func requestSentAndProxyMode() {
    let o = makeOutcome(events: [
      ev(0.5, "proxy-mode", ["useTor": "true"]), ev(8, "request-sent", ["transport": "tor"]),
      ev(20, "proxy-mode", ["useTor": "false"]),
    ])
    #expect(status(.requestSent(transport: .tor, by: 10), o).status == .met)
    #expect(status(.requestSent(transport: .tor, by: 5), o).status == .failed)
    #expect(status(.requestSent(transport: .direct, by: 50), o).status == .failed)
    #expect(status(.proxyMode(.tor, at: 15), o).status == .met)
    #expect(status(.proxyMode(.direct, at: 21), o).status == .met)
    let wrong = status(.proxyMode(.tor, at: 30), o)
    #expect(wrong.status == .failed)
    #expect(wrong.reason == "proxy mode was direct (set at 20 s)")
    #expect(status(.proxyMode(.tor, at: 0.1), o).status == .failed)
  }

  @Test func bootstrapSummaryAtATimeOrAtTheEnd() {
    let o = makeOutcome(bootstrap: [
      BootstrapSample(time: 0, progress: 0, summary: "Starting..."),
      BootstrapSample(time: 1, progress: 0, summary: "Bootstrapping..."),
      BootstrapSample(time: 65, progress: 100, summary: "Ready"),
    ])
    #expect(status(.bootstrapSummary(text: "Ready", match: .equals, at: nil), o).status == .met)
    #expect(
      status(.bootstrapSummary(text: "Bootstrapping...", match: .equals, at: 64), o).status == .met)
    #expect(status(.bootstrapSummary(text: "Boot", match: .contains, at: 30), o).status == .met)
    let failed = status(.bootstrapSummary(text: "Ready", match: .equals, at: 30), o)
    #expect(failed.status == .failed)
    #expect(failed.reason == "summary \"Bootstrapping...\" (0%) at 1 s")
    #expect(
      status(.bootstrapSummary(text: "Ready", match: .equals, at: nil), makeOutcome()).status
        == .failed)
  }

  @Test func eventsInOrderAsASubsequenceWithFieldPatterns() {
    let o = makeOutcome(events: [
      ev(0, "TorWillStart"), ev(0.1, "proxy-mode", ["useTor": "true"]), ev(5, "TorDidBecomeReady"),
      ev(20, "proxy-mode", ["useTor": "false"]),
    ])
    #expect(
      status(.eventsInOrder(["TorWillStart", "TorDidBecomeReady", "proxy-mode useTor=false"]), o)
        .status == .met)
    let wrongOrder = status(.eventsInOrder(["TorDidBecomeReady", "TorWillStart"]), o)
    #expect(wrongOrder.status == .failed)
    #expect(
      wrongOrder.reason == "matched 1 of 2: no \"TorWillStart\" after TorDidBecomeReady at 5 s")
    #expect(
      status(.eventsInOrder(["TorWillStart", "proxy-mode useTor=maybe"]), o).status == .failed)
  }

  @Test func trafficOnlyToTor() {
    let tor = [
      TrafficSample(time: 1, trafficClass: "tor", packets: 30),
      TrafficSample(time: 1, trafficClass: "link-control", packets: 2),
    ]
    #expect(status(.trafficOnlyToTor, makeOutcome(traffic: tor)).status == .met)
    #expect(status(.trafficOnlyToTor, makeOutcome(leaks: [leak(.udp, at: 3)])).status == .failed)
    let stray = tor + [TrafficSample(time: 4, trafficClass: "ipv6", packets: 1)]
    #expect(status(.trafficOnlyToTor, makeOutcome(traffic: stray)).status == .failed)
    #expect(status(.trafficOnlyToTor, makeOutcome(audit: .inconclusive)).status == .inconclusive)
    // Exposure is not Tor traffic either.
    #expect(
      status(.trafficOnlyToTor, makeOutcome(leaks: [leak(.tcp, at: 3)]), preference: false).status
        == .failed)
  }

  @Test func clearnetByTheUsersChoiceIsExposureNotALeak() {
    let scenario = makeScenario(
      [.noLeak, .clearnetByUserChoice],
      actions: [AppAction(at: 20, step: .setPreference(enabled: false))])
    let judgement = ExpectationJudge.judge(
      scenario, makeOutcome(leaks: [leak(.dns, at: 21, names: ["nos.lol"]), leak(.tcp, at: 21.2)]))
    #expect(judgement.verdict == .pass)
    #expect(judgement.leaks.isEmpty)
    #expect(judgement.exposure.count == 2)
    #expect(judgement.expectations.map(\.status) == [.met, .met])
    // The same traffic before the user turned Tor off is a leak.
    let early = ExpectationJudge.judge(scenario, makeOutcome(leaks: [leak(.dns, at: 19.9)]))
    #expect(early.verdict == .leak)
    #expect(early.expectations.map(\.status) == [.failed, .failed])
    #expect(status(.clearnetByUserChoice, makeOutcome(), preference: false).status == .failed)
  }

  @Test func verdictPrecedenceLeakThenFailedThenInconclusiveThenPass() {
    let s = makeScenario([.notification(name: "TorDidBecomeReady", by: 10, count: nil)])
    let ready = [ev(5, "TorDidBecomeReady")]
    #expect(ExpectationJudge.judge(s, makeOutcome(events: ready)).verdict == .pass)
    #expect(ExpectationJudge.judge(s, makeOutcome()).verdict == .failed)
    #expect(
      ExpectationJudge.judge(s, makeOutcome(events: ready, audit: .inconclusive)).verdict
        == .inconclusive)
    #expect(ExpectationJudge.judge(s, makeOutcome(audit: .inconclusive)).verdict == .failed)
    // A leak is a leak even with no no-leak expectation: the capture decides.
    let leaky = ExpectationJudge.judge(s, makeOutcome(events: ready, leaks: [leak(.icmp, at: 2)]))
    #expect(leaky.verdict == .leak)
    #expect(leaky.reasons[0].hasPrefix("1 leak: icmp to"))
    let crashed = ExpectationJudge.judge(s, makeOutcome(runError: "app exited 1"))
    #expect(crashed.verdict == .inconclusive)
    #expect(crashed.reasons == ["the run did not complete: app exited 1"])
    #expect(ScenarioVerdict.inconclusive.exitCode == 2)
    #expect(ScenarioVerdict.leak.exitCode == 5)
    #expect(ScenarioVerdict.failed.exitCode == 5)
  }
}

@Suite struct GenericEventExpectationTests {
  func status(_ e: ScenarioExpectation, _ o: ScenarioOutcome) -> ExpectationResult {
    ExpectationJudge.judge(makeScenario([e]), o).expectations[0]
  }

  @Test func eventByATimeWithFieldsAndCount() {
    let o = makeOutcome(events: [
      ev(1, "relay-added"), ev(2, "relay-added"),
      ev(3, "relay-rejected", ["reason": "limitReached"]),
    ])
    #expect(status(.event("relay-added", by: 5, count: 2), o).status == .met)
    let wrongCount = status(.event("relay-added", by: 5, count: 8), o)
    #expect(wrongCount.status == .failed)
    #expect(wrongCount.reason == "\"relay-added\" 2 times (at 1 s, 2 s), expected 8")
    #expect(
      status(.event("relay-rejected reason=limitReached", by: 3, count: nil), o).status == .met)
    #expect(
      status(.event("relay-rejected reason=malformed", by: 9, count: nil), o).status == .failed)
    #expect(status(.event("relay-added", by: 0.5, count: nil), o).status == .failed)
  }

  @Test func noEventBeforeATimeOrAtAll() {
    let o = makeOutcome(events: [ev(80, "directory-fetch")])
    #expect(status(.noEvent("directory-fetch", before: 75), o).status == .met)
    let failed = status(.noEvent("directory-fetch", before: nil), o)
    #expect(failed.status == .failed)
    #expect(failed.reason == "\"directory-fetch\" at 80 s")
  }

  @Test func aSocketOpenedBeforeReadyBreaksTheQueueButTheProbeDoesNot() {
    let probe = makeOutcome(events: [
      ev(1, "request-queued"),
      ev(2, "socket-opened", ["transport": "probe", "endpoint": "127.0.0.1:39050"]),
      ev(5, "TorDidBecomeReady"), ev(6, "socket-opened", ["transport": "tor"]),
    ])
    #expect(status(.requestsQueuedBeforeReady, probe).status == .met)
    let early = makeOutcome(events: [
      ev(1, "request-queued"),
      ev(2, "socket-opened", ["transport": "direct", "endpoint": "10.66.1.80:443"]),
    ])
    let result = status(.requestsQueuedBeforeReady, early)
    #expect(result.status == .failed)
    #expect(result.reason == "socket opened at 2 s (10.66.1.80:443) while Tor was not ready")
  }
}

/// What request-sent and requests-queued-before-ready count (issue 20): relay connections and
/// held URLs where users expect them, said in the reason.
@Suite struct WhatExpectationsCountTests {
  func result(_ e: ScenarioExpectation, _ events: [ScenarioEvent]) -> ExpectationResult {
    ExpectationJudge.judge(makeScenario([e]), makeOutcome(events: events)).expectations[0]
  }

  @Test func requestSentCountsARelayConnectionThroughTheTransport() {
    let relay = ev(
      7, ScenarioEventKind.socketOpened.name,
      ["transport": "tor", "purpose": "relay", "target": "nos.lol:443"])
    let met = result(.requestSent(transport: .tor, by: 10), [relay])
    #expect(met.status == .met)
    #expect(met.reason == "relay connection to nos.lol:443 via tor at 7 s")
    let late = result(.requestSent(transport: .tor, by: 5), [relay])
    #expect(late.status == .failed)
    #expect(late.reason.contains("(relay connection to nos.lol:443), after 5 s"))
    // The SOCKS probe is not a request.
    let probe = ev(
      1, ScenarioEventKind.socketOpened.name, ["transport": "probe", "purpose": "socks-probe"])
    let none = result(.requestSent(transport: .tor, by: 10), [probe])
    #expect(none.status == .failed)
    #expect(none.reason == "no HTTP request and no relay connection went out via tor")
  }

  @Test func aHeldURLCountsAsQueued() {
    let held = ev(3, "request-held", ["url": "https://example.com/", "transport": "tor"])
    let ready = ev(10, ScenarioEventKind.torDidBecomeReady.name)
    let load = ev(
      11, ScenarioEventKind.requestSent.name, ["transport": "tor", "url": "https://example.com/"])
    #expect(result(.requestsQueuedBeforeReady, [held, ready, load]).status == .met)
    let nothing = result(.requestsQueuedBeforeReady, [ready, load])
    #expect(nothing.status == .failed)
    #expect(nothing.reason.contains("no held URL"))
  }
}
