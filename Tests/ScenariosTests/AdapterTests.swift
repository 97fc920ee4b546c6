import Audit
import FailClosedSupport
import Foundation
import Sandbox
import SystemUnderTest
import Testing
import Vocabulary

@testable import Lanes
@testable import Scenarios

/// The pieces the runner uses to fill a ScenarioOutcome from the other modules.
@Suite struct AdapterTests {
  /// The model checks a plan against the censor without linking the sandbox: its guard port
  /// must be the sandbox's.
  @Test func theModelsGuardPortIsTheSandboxs() {
    #expect(AddressPlan.guards.allSatisfy { Int($0.port) == PlanCensorAgreement.mockGuardPort })
  }

  /// The model's own copies of the app's names: the verbs are the driver's action names, the
  /// hosts the app contacts on its own are the model's built-in relays and directory.
  @Test func theModelsVerbsAndHostsAreTheApps() {
    let steps: [Scenarios.AppAction.Step] = [
      .start, .foreground, .background, .setPreference(enabled: true), .revokeActivation,
      .grantActivation, .pathChange(satisfied: true), .addRelay(url: "wss://a.example"),
      .sendMessage(text: "hi"), .refreshDirectory, .openURL(url: "https://a.example"), .torCrash,
    ]
    #expect(steps.map(\.name) == ActionVerbs.scenarioNames())
    for step in steps { #expect(step.name == (step.driverKind?.name ?? "tor-crash")) }
    #expect(
      ScenarioParser.builtInURLs
        == NostrRelaySettings.builtInRelays + [GeoRelayDirectory.defaultRemoteURL])
  }

  @Test func censorPlansBecomeSandboxRulesWithTheSandboxsAddresses() throws {
    let plan = NetworkPlan(
      censor: [
        CensorPlanRule(action: .drop, target: "tor-guards", transport: .tcp, until: 25),
        CensorPlanRule(action: .reset, target: "relay.damus.io", port: 443, from: 10),
        CensorPlanRule(
          action: .icmpAdminProhibited, target: "any", transport: .udp, longerThan: 200),
      ],
      dnsPoisoning: [DNSPoisoning(name: "nos.lol", answer: .sinkhole)])
    let early = SandboxMapping.censorRules(plan, at: 0)
    #expect(early.count == 4)
    #expect(early[0].action == .drop)
    #expect(early[0].destination == "10.66.1.10")
    #expect(early[0].port == 9001)
    #expect(early[0].protocol == .tcp)
    #expect(early[1].action == .icmpAdminProhibited)
    #expect(early[1].destination == nil)
    #expect(early[1].longerThan == 200)
    // Both record types are poisoned: A to the v4 sinkhole, AAAA to the v6 one.
    #expect(early[2].action == .poisonDNS)
    #expect(early[2].names == ["nos.lol"])
    #expect(early[2].poisonAddress == AddressPlan.censorWorldSideV4)
    #expect(early[3].action == .poisonDNS)
    #expect(early[3].names == ["nos.lol"])
    #expect(early[3].poisonAddress == AddressPlan.censorWorldSideV6)
    for rule in early { try rule.validate() }
    let later = SandboxMapping.censorRules(plan, at: 30)
    #expect(later.map(\.action) == [.reset, .reset, .icmpAdminProhibited, .poisonDNS, .poisonDNS])
    #expect(later[0].destination == AddressPlan.webHostV4)
    #expect(later[0].port == 443)
    for rule in later { try rule.validate() }
    #expect(SandboxMapping.changeTimes(plan) == [10, 25])
  }

  @Test func everyLibraryScenarioMapsToValidSandboxRules() throws {
    for item in ScenarioLoader.load([scenariosDirectory]) {
      let scenario = try item.result.get()
      if let mock = scenario.tor.mock { #expect(mock.plan != nil, "\(scenario.name)") }
      let real = SandboxMapping.RealTorTargets(
        relays: [SocketAddress("10.66.1.101:9001")!, SocketAddress("10.66.1.101:9030")!],
        bridges: [SocketAddress("10.66.1.106:4433")!])
      for t in [0] + SandboxMapping.changeTimes(scenario.network) {
        for rule in SandboxMapping.censorRules(scenario.network, at: t, real: real) {
          #expect(throws: Never.self, "\(scenario.name)") { try rule.validate() }
        }
      }
    }
  }

  @Test func anAuditReportLandsOnTheScenariosVirtualTimeAxis() throws {
    let json = """
      {"verdict": "leak", "reasons": [{"kind": "drops", "detail": "ps_drop 2"}], "allowed": [],
       "leaks": [{"class": "dns", "protocol": "udp", "destination": "10.66.1.53:53",
                  "sources": ["10.66.0.2"], "names": ["nos.lol"], "firstTime": 1000.2,
                  "firstOffset": 0.2, "lastTime": 1000.4, "packets": 2, "bytes": 120,
                  "replyPackets": 2}],
       "linkControl": {"arp": 0, "neighbourDiscovery": 0, "mld": 0, "igmp": 0},
       "statistics": {"linkType": "ethernet", "packets": 50, "bytes": 4000, "allowedPackets": 40,
                      "controlPackets": 1, "linkControlPackets": 3, "inboundPackets": 0,
                      "leakPackets": 2, "leakReplyPackets": 2, "undecodablePackets": 0, "undecidedPackets": 0,
                      "flowOverflowPackets": 0, "leakGroupOverflowPackets": 0, "unverifiedFlows": 0},
       "capture": {"received": 52, "dropped": 2, "interfaceDropped": 1},
       "flows": [
         {"protocol": "tcp", "source": "10.66.0.2", "destination": "10.66.1.10",
          "sourcePort": 40000, "destinationPort": 9001, "firstTime": 1000.0, "lastTime": 1000.1,
          "packets": 40, "bytes": 3000, "disposition": "allowed", "names": []},
         {"protocol": "udp", "source": "10.66.0.2", "destination": "10.66.1.53",
          "sourcePort": 5000, "destinationPort": 53, "firstTime": 1000.2, "lastTime": 1000.2,
          "packets": 2, "bytes": 120, "disposition": "leak:dns", "names": ["nos.lol"]},
         {"protocol": "arp", "source": "", "destination": "", "sourcePort": 0,
          "destinationPort": 0, "firstTime": 1000.0, "lastTime": 1000.0, "packets": 3,
          "bytes": 180, "disposition": "link-control:arp", "names": []}]}
      """
    let report = try JSONDecoder().decode(AuditReport.self, from: Data(json.utf8))
    let audit = CaptureAudit(report, runStart: 1000, timeScale: 75)
    #expect(audit.verdict == .leak)
    #expect(audit.inconclusiveReasons == ["drops: ps_drop 2"])
    #expect(audit.leaks.count == 1)
    #expect(abs(audit.leaks[0].firstTime - 15) < 1e-6)
    #expect(abs(audit.leaks[0].lastTime - 30) < 1e-6)
    #expect(audit.leaks[0].transport == "udp")
    let byClass = Dictionary(grouping: audit.traffic, by: \.trafficClass)
      .mapValues { $0.reduce(0) { $0 + $1.packets } }
    #expect(byClass == ["tor": 40, "dns": 2, "link-control": 3])
    // The allowed flow spans 0...7.5 virtual seconds: spread over 8 one-second buckets.
    #expect(audit.traffic.filter { $0.trafficClass == "tor" }.count == 8)
    let stats = CaptureStats(report, pcapPath: "/tmp/x.pcap")
    #expect(stats.dropped == 3)
    #expect(stats.packets == 50)
    #expect(stats.positiveControlSeen)
  }
}

@Suite struct AppEventAdapterTests {
  /// Lines as `failclosed app` writes them (SystemUnderTest.AppEvent.jsonLine).
  static let lines = [
    #"{"t":0.000,"type":"action","action":"start"}"#,
    #"{"t":0.000,"type":"notification","name":"TorWillStart"}"#,
    #"{"t":0.000,"type":"state","component":"tor","field":"bootstrapSummary","value":"Starting..."}"#,
    #"{"t":1.000,"type":"state","component":"tor","field":"bootstrapSummary","value":"Bootstrapping..."}"#,
    #"{"t":2.000,"type":"message","phase":"queued","id":"m1"}"#,
    #"{"t":2.500,"type":"socket","endpoint":"127.0.0.1:39050","transport":"probe","purpose":"socks-probe"}"#,
    #"{"t":5.000,"type":"state","component":"tor","field":"bootstrapProgress","value":100}"#,
    #"{"t":5.000,"type":"state","component":"tor","field":"bootstrapSummary","value":"Ready"}"#,
    #"{"t":5.200,"type":"state","component":"tor","field":"isReady","value":true}"#,
    #"{"t":5.200,"type":"notification","name":"TorDidBecomeReady"}"#,
    #"{"t":5.300,"type":"request","url":"https://raw.githubusercontent.com/x.csv","via":"tor","phase":"start"}"#,
    #"{"t":6.000,"type":"relay","relay":"wss://abc.onion","phase":"failed","error":"onion"}"#,
    #"{"t":7.000,"type":"relay","relay":"wss://r9.example","phase":"rejected","error":"limitReached"}"#,
    #"{"t":7.500,"type":"state","component":"session","field":"proxyMode","value":"direct"}"#,
    #"{"t":8.000,"type":"notification","name":"TorUserPreferenceChanged","enabled":false}"#,
    #"{"t":8.000,"type":"directory","phase":"loaded","source":"cache","count":120}"#,
  ]

  @Test func driverEventsAreNormalisedToTheScenarioVocabulary() throws {
    let appEvents = try Self.lines.map { try SystemUnderTest.AppEvent(jsonLine: $0) }
    let events = appEvents.map(ScenarioEvent.init)
    #expect(
      events.map(\.name) == [
        "action", "TorWillStart", "tor.bootstrapSummary", "tor.bootstrapSummary",
        "request-queued", "socket-opened", "tor.bootstrapProgress", "tor.bootstrapSummary",
        "ready-changed", "TorDidBecomeReady", "request-sent", "request-failed",
        "relay-rejected", "proxy-mode", "TorUserPreferenceChanged", "directory-loaded",
      ])
    #expect(events[8].fields == ["isReady": "true"])
    #expect(events[10].fields["transport"] == "tor")
    #expect(events[12].fields["reason"] == "limitReached")
    #expect(events[13].fields == ["useTor": "false"])
    #expect(events[14].fields == ["enabled": "false"])
    #expect(EventPattern("directory-loaded source=cache").matches(events[15]))

    let bootstrap = BootstrapSample.timeline(from: appEvents)
    #expect(
      bootstrap == [
        BootstrapSample(time: 0, progress: 0, summary: "Starting..."),
        BootstrapSample(time: 1, progress: 0, summary: "Bootstrapping..."),
        BootstrapSample(time: 5, progress: 100, summary: "Ready"),
      ])

    // The whole outcome, judged: queued before ready, the probe is not a request.
    let audit = AuditReport(verdict: .pass, reasons: [])
    let outcome = ScenarioOutcome(
      appEvents: appEvents, audit: audit, runStart: 0, timeScale: 75, wallSeconds: 0.2)
    let judgement = ExpectationJudge.judge(
      makeScenario([
        .requestsQueuedBeforeReady, .noLeak,
        .eventsInOrder(["TorWillStart", "ready-changed isReady=true", "request-sent transport=tor"]
        ),
        .bootstrapSummary(text: "Ready", match: .equals, at: nil),
      ]), outcome)
    #expect(judgement.expectations.map(\.status) == [.met, .met, .met, .met])
    #expect(judgement.verdict == .pass)
  }
}
