@testable import Reports
@testable import Scenarios

/// A run with one scenario of each verdict, a canary, exposure and a malformed file, with
/// hostile text in the evidence (markup, quotes, control characters) to test the escaping.
func makeSampleReport(pcapPath: String? = nil) -> RunReport {
  let ready: [ScenarioEvent] = [
    ev(0, "TorWillStart"), ev(0.1, "proxy-mode", ["useTor": "true"]),
    ev(10, "request-queued", ["kind": "message"]), ev(5.2, "TorDidBecomeReady"),
    ev(5.3, "request-sent", ["transport": "tor", "kind": "message"]),
  ]
  let bootstrap = [
    BootstrapSample(time: 0, progress: 0, summary: "Starting..."),
    BootstrapSample(time: 1, progress: 0, summary: "Bootstrapping..."),
    BootstrapSample(time: 5, progress: 100, summary: "Ready"),
  ]
  let torTraffic = (0..<20).map {
    TrafficSample(time: Double($0), trafficClass: "tor", packets: 3 + $0)
  }
  var passOutcome = makeOutcome(events: ready, bootstrap: bootstrap, traffic: torTraffic)
  passOutcome.torTimeline = sampleTorTimeline
  passOutcome.fetchThroughExit = true
  let pass = ScenarioResult(
    scenario: makeScenario(
      [.noLeak, .notification(name: "TorDidBecomeReady", by: 10, count: 1)],
      name: "healthy-baseline"),
    outcome: passOutcome)
  let leaky = ScenarioResult(
    scenario: makeScenario([.noLeak], name: "activation-revoked"),
    outcome: makeOutcome(
      events: ready + [ev(20, "proxy-mode", ["useTor": "false"])], bootstrap: bootstrap,
      leaks: [
        leak(
          .dns, at: 20.1,
          names: ["raw.githubusercontent.com", "<script>alert(1)</script>&\"'\u{1}"]),
        leak(.tcp, at: 20.3),
      ],
      traffic: torTraffic + [
        TrafficSample(time: 20, trafficClass: "dns", packets: 2),
        TrafficSample(time: 20, trafficClass: "tcp", packets: 9),
      ]))
  var leakyWithPcap = leaky
  leakyWithPcap.outcome.capture.pcapPath = pcapPath
  let failed = ScenarioResult(
    scenario: makeScenario(
      [.notification(name: "TorBootstrapDidStall", by: 75, count: 1)], name: "stall-past-75s"),
    outcome: makeOutcome(events: [ev(0, "TorWillStart"), ev(80, "TorBootstrapDidStall")]))
  let inconclusive = ScenarioResult(
    scenario: makeScenario([.noLeak], name: "relays-dropped"),
    outcome: makeOutcome(events: ready, audit: .inconclusive))
  let canary = ScenarioResult(
    scenario: makeScenario([.leakCaught(classes: [.dns])], name: "naive-port-canary"),
    outcome: makeOutcome(leaks: [leak(.dns, at: 10, names: ["nos.lol"])]))
  let exposure = ScenarioResult(
    scenario: makeScenario(
      [.noLeak, .clearnetByUserChoice], preference: false, name: "preference-off"),
    outcome: makeOutcome(leaks: [leak(.tcp, at: 5)]))
  return RunReport(
    startedAt: "2026-11-29T14:00:00Z", versions: ["failclosed": "0.1.0", "swift": "6.3.1"],
    results: [pass, leakyWithPcap, failed, inconclusive, canary, exposure],
    loadErrors: [
      ScenarioError(
        file: "Scenarios/broken.json", path: "expect[2].by",
        message: "expected a number of seconds, got \"soon\"")
    ], networkReadySeconds: 14.7)
}

/// tor's timeline as a control-port client reports it: polls, steps, a problem, a HUP, and a
/// step from tor's log; with hostile text in a summary.
let sampleTorTimeline: [TorTimelineEntry] =
  (0..<5).map {
    TorTimelineEntry(
      time: Double($0) * 0.15, phase: "command", command: "GETINFO status/bootstrap-phase")
  } + [
    TorTimelineEntry(
      time: 0.2, phase: "bootstrap", progress: 0, tag: "starting", summary: "Starting"),
    TorTimelineEntry(
      time: 0.9, phase: "bootstrap", progress: 5, tag: "conn", summary: "Connecting to a relay"),
    TorTimelineEntry(
      time: 1.4, phase: "problem", progress: 5, tag: "conn", summary: "Connecting </td>&",
      reason: "CONNECTREFUSED", count: 1),
    TorTimelineEntry(time: 3.0, phase: "command", command: "SIGNAL HUP"),
    TorTimelineEntry(
      time: 4.8, source: .log, phase: "bootstrap", progress: 100, tag: "done", summary: "Done"),
  ]
