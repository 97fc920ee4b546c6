import Testing
import TorControl

@testable import MockTor

@Suite struct BootstrapPhaseTests {
  @Test func tableMatchesTor049() {
    let rows = BootstrapPhase.all.map { "\($0.progress) \($0.tag)" }
    #expect(
      rows == [
        "0 starting", "1 conn_pt", "2 conn_done_pt", "3 conn_proxy", "4 conn_done_proxy",
        "5 conn", "10 conn_done", "14 handshake", "15 handshake_done", "20 onehop_create",
        "25 requesting_status", "30 loading_status", "40 loading_keys",
        "45 requesting_descriptors", "50 loading_descriptors", "75 enough_dirinfo",
        "76 ap_conn_pt", "77 ap_conn_done_pt", "78 ap_conn_proxy", "79 ap_conn_done_proxy",
        "80 ap_conn", "85 ap_conn_done", "89 ap_handshake", "90 ap_handshake_done",
        "95 circuit_create", "100 done",
      ])
    #expect(BootstrapPhase.named("conn")?.summary == "Connecting to a relay")
    #expect(BootstrapPhase.named("conn_done")?.summary == "Connected to a relay")
    #expect(BootstrapPhase.named("done")?.summary == "Done")
    #expect(BootstrapPhase.direct.count == 18)
    #expect(BootstrapPhase.direct.allSatisfy { !$0.tag.hasSuffix("_pt") })
  }
}

@Suite struct BootstrapPlanTests {
  @Test(arguments: [
    ("healthy:5", BootstrapPlan.healthy(after: 5)),
    ("healthy", .healthy(after: 5)),
    ("healthy:0.25", .healthy(after: 0.25)),
    ("stall:conn:timeout", .stalled(atTag: "conn", failure: .timeout)),
    ("stall:conn:refused", .stalled(atTag: "conn", failure: .connectRefused)),
    ("stall:conn_done", .stalled(atTag: "conn_done", failure: .none)),
    ("never", .neverStarting),
    ("flap:10", .flapping(period: 10)),
    ("crash:30", .crash(after: 30)),
    ("stall:conn:timeout:30", .recovering(atTag: "conn", failure: .timeout, until: 30)),
    ("stall:conn:2.5", .recovering(atTag: "conn", failure: .none, until: 2.5)),
  ])
  func parses(text: String, plan: BootstrapPlan) throws {
    #expect(try BootstrapPlan(parsing: text) == plan)
    #expect(try BootstrapPlan(parsing: plan.description) == plan)
  }

  @Test(arguments: [
    ("stall:nosuch", "\"nosuch\": unknown bootstrap phase tag"),
    ("stall:conn:boom", "\"boom\": unknown failure"),
    ("healthy:soon", "\"soon\": not a number of seconds"),
    ("healthy:-1", "\"-1\": not a number of seconds"),
    ("flap", "missing SECONDS"),
    ("flap:0", "period must be positive"),
    ("crash:3:4", "\"4\": unexpected extra part"),
    ("stall", "missing phase TAG"),
    ("stall:conn:timeout:0", "\"0\": not a number of seconds above 0"),
    ("stall:conn:timeout:30:4", "\"30\": unexpected extra part"),
    ("sometimes", "\"sometimes\": unknown plan"),
  ])
  func rejectsWithThePartAtFault(text: String, message: String) {
    #expect {
      try BootstrapPlan(parsing: text)
    } throws: { error in
      "\(error)".contains(message) && "\(error)".contains("bootstrap plan \"\(text)\"")
    }
  }
}

@Suite struct BootstrapSimulatorTests {
  func progressTags(_ events: [BootstrapEvent]) -> [String] {
    events.compactMap {
      if case .progress(let phase) = $0.kind { return phase.tag }
      return nil
    }
  }

  func warnings(_ events: [BootstrapEvent]) -> [(Double, BootstrapWarning)] {
    events.compactMap {
      if case .warning(let warning) = $0.kind { return ($0.time, warning) }
      return nil
    }
  }

  @Test func healthyCtorWalksTheDirectPhasesOverTheGivenTime() {
    let simulator = BootstrapSimulator(plan: .healthy(after: 17), personality: .ctor)
    #expect(simulator.state(at: 0).tag == "starting")
    #expect(simulator.state(at: 1).tag == "conn")
    #expect(simulator.state(at: 8.5).progress < 100)
    #expect(simulator.state(at: 17).progress == 100)
    #expect(simulator.state(at: 17).isReady)
    let all = simulator.events(through: 100)
    #expect(progressTags(all) == BootstrapPhase.direct.map(\.tag))
    #expect(all.last?.kind == .networkUp)
    #expect(warnings(all).isEmpty)
  }

  @Test func eventsBetweenTwoTimesAreHalfOpen() {
    let simulator = BootstrapSimulator(plan: .healthy(after: 17), personality: .ctor)
    #expect(progressTags(simulator.events(after: 0, through: 1)) == ["conn"])
    #expect(progressTags(simulator.events(after: 1, through: 2)) == ["conn_done"])
    #expect(simulator.events(after: 2, through: 2).isEmpty)
    #expect(progressTags(simulator.events(after: -1, through: 0)) == ["starting"])
  }

  @Test func healthyArtiReportsOnlyZeroOrHundred() {
    let simulator = BootstrapSimulator(plan: .healthy(after: 10), personality: .arti)
    let all = simulator.events(through: 60)
    #expect(
      all.map(\.kind) == [
        .progress(BootstrapSimulator.artiStarting), .progress(BootstrapSimulator.artiBootstrapping),
        .progress(BootstrapSimulator.artiReady),
      ])
    #expect(all.map(\.time) == [0, 2, 10])
    #expect(simulator.state(at: 5).summary == "Bootstrapping...")
    #expect(simulator.state(at: 10).summary == "Ready")
    #expect(simulator.state(at: 10).progress == 100)
  }

  @Test func refusedRelaysWarnEveryFewSecondsAndReachWarnAtSixteenSeconds() {
    let simulator = BootstrapSimulator(
      plan: .stalled(atTag: "conn", failure: .connectRefused), personality: .ctor)
    // starting at 0, conn at 0.5: the stall begins at 0.5.
    #expect(simulator.state(at: 0.5).tag == "conn")
    let reports = warnings(simulator.events(through: 0.5 + 16 + 1e-9))
    #expect(reports.count == 10)
    #expect(reports.map(\.1.count) == Array(1...10))
    #expect(reports[8].1.recommendation == "ignore")
    #expect(reports[9].1.recommendation == "warn")
    #expect(abs(reports[9].0 - (0.5 + 16)) < 1e-9)
    #expect(reports.allSatisfy { $0.1.reason == "CONNECTREFUSED" })
    #expect(reports.allSatisfy { $0.1.warning == "Connection refused" })
    #expect(reports.allSatisfy { $0.1.phase.tag == "conn" && $0.1.phase.progress == 5 })
    let state = simulator.state(at: 100)
    #expect(state.tag == "conn")
    #expect(state.lastWarning?.count == 62)
    #expect(!state.isReady)
  }

  @Test func droppedRelaysTimeOutLateAndSlowly() {
    let simulator = BootstrapSimulator(
      plan: .stalled(atTag: "conn", failure: .timeout), personality: .ctor)
    #expect(warnings(simulator.events(through: 0.5 + 132)).isEmpty)
    let reports = warnings(simulator.events(through: 0.5 + 133 + 20 * 9 + 1e-9))
    #expect(reports.count == 10)
    #expect(reports.first?.0 == 0.5 + 133)
    #expect(reports.first?.1.reason == "TIMEOUT")
    #expect(reports.first?.1.warning == "Connection timed out")
    #expect(reports.last?.1.recommendation == "warn")
  }

  @Test func stallWithoutFailureStaysQuietAtThePhase() {
    let simulator = BootstrapSimulator(
      plan: .stalled(atTag: "conn_done", failure: .none), personality: .ctor)
    let all = simulator.events(through: 10_000)
    #expect(progressTags(all) == ["starting", "conn", "conn_done"])
    #expect(simulator.state(at: 10_000).progress == 10)
    #expect(simulator.state(at: 10_000).summary == "Connected to a relay")
  }

  @Test func stallAtAPluggableTransportPhaseWalksThatFamily() {
    let simulator = BootstrapSimulator(
      plan: .stalled(atTag: "conn_done_pt", failure: .none), personality: .ctor)
    #expect(progressTags(simulator.events(through: 60)) == ["starting", "conn_pt", "conn_done_pt"])
  }

  @Test func neverStartingStaysAtZero() {
    let ctor = BootstrapSimulator(plan: .neverStarting, personality: .ctor)
    #expect(ctor.state(at: 1e6).phase == .starting)
    let arti = BootstrapSimulator(plan: .neverStarting, personality: .arti)
    #expect(arti.state(at: 1e6).summary == "Starting...")
  }

  @Test func flappingTogglesTheNetworkEveryPeriod() {
    let ctor = BootstrapSimulator(plan: .flapping(period: 10), personality: .ctor)
    #expect(ctor.state(at: 10).isReady)
    #expect(!ctor.state(at: 20).isReady)
    #expect(ctor.state(at: 20).progress == 100)
    #expect(ctor.state(at: 30).isReady)
    #expect(!ctor.state(at: 45).isReady)
    let flaps = ctor.events(after: 10, through: 40).map(\.kind)
    #expect(
      flaps == [
        .networkDown(reason: "DIR_ALL_UNREACHABLE"), .networkUp,
        .networkDown(reason: "DIR_ALL_UNREACHABLE"),
      ])
    let arti = BootstrapSimulator(plan: .flapping(period: 10), personality: .arti)
    #expect(arti.state(at: 25).progress == 0)
    #expect(arti.state(at: 35).progress == 100)
  }

  @Test func crashCutsTheBootstrapShort() {
    let early = BootstrapSimulator(plan: .crash(after: 2), personality: .ctor)
    #expect(early.state(at: 1.9).progress < 100)
    #expect(early.state(at: 2).crashed)
    #expect(early.events(through: 1e6).last?.kind == .crashed)
    let late = BootstrapSimulator(plan: .crash(after: 30), personality: .ctor)
    #expect(late.state(at: 29).isReady)
    #expect(late.state(at: 30).crashed)
    #expect(!late.state(at: 30).isReady)
  }

  @Test func farFutureQueriesAreBounded() {
    let simulator = BootstrapSimulator(
      plan: .stalled(atTag: "conn", failure: .connectRefused), personality: .ctor)
    #expect(simulator.events(through: 1e12).count == BootstrapSimulator.maximumEvents)
  }

  @Test func disabledNetworkFreezesPlanTime() {
    var timeline = BootstrapTimeline(origin: 100)
    #expect(timeline.planTime(at: 105) == 5)
    timeline.setNetworkDisabled(true, at: 105)
    #expect(timeline.planTime(at: 200) == 5)
    timeline.setNetworkDisabled(false, at: 200)
    #expect(timeline.planTime(at: 201) == 6)
    let paused = BootstrapTimeline(origin: 0, networkDisabled: true)
    #expect(paused.planTime(at: 50) == 0)
  }
}

/// A stall that ends (issue 20: "stalled, then recovers" could not be written).
@Suite struct RecoveringStallTests {
  @Test func ctorStaysAtThePhaseWithItsProblemsUntilTheEndThenReachesDone() {
    let simulator = BootstrapSimulator(
      plan: .recovering(atTag: "conn", failure: .connectRefused, until: 30), personality: .ctor)
    let stuck = simulator.state(at: 29.9)
    #expect(stuck.tag == "conn")
    #expect(stuck.lastWarning?.reason == "CONNECTREFUSED")
    #expect(!stuck.isReady)
    // No problem report once the stall is lifted.
    let after = simulator.events(after: 30, through: 200)
    #expect(!after.contains { if case .warning = $0.kind { return true } else { return false } })
    #expect(simulator.state(at: 30).tag == "conn_done")
    let steps = BootstrapPhase.direct.filter { $0.progress > 5 }.count
    let ready = 30 + Double(steps - 1) * BootstrapSimulator.stepSeconds
    #expect(!simulator.state(at: ready - 0.1).isReady)
    #expect(simulator.state(at: ready).isReady)
    #expect(simulator.state(at: 500).isReady)
  }

  @Test func artiGoesFromBootstrappingToReadyAtTheEnd() {
    let simulator = BootstrapSimulator(
      plan: .recovering(atTag: "conn", failure: .timeout, until: 12), personality: .arti)
    #expect(simulator.state(at: 11.9).summary == "Bootstrapping...")
    #expect(!simulator.state(at: 11.9).isReady)
    #expect(simulator.state(at: 12).isReady)
  }
}

/// The mock keeps a state until the plan's next change (``BootstrapSimulator/stateAndNextChange(at:)``):
/// a wrong next change would keep a stale state, so every plan is checked against the timeline.
@Suite struct BootstrapNextChangeTests {
  static let plans: [BootstrapPlan] = [
    .healthy(after: 5), .healthy(after: 0), .stalled(atTag: "conn", failure: .timeout),
    .stalled(atTag: "conn", failure: .connectRefused), .stalled(atTag: "conn_done", failure: .none),
    .neverStarting, .flapping(period: 3), .crash(after: 2.2),
    .recovering(atTag: "conn", failure: .timeout, until: 30),
    .recovering(atTag: "conn", failure: .none, until: 2.5),
  ]

  @Test(arguments: plans, [BootstrapPersonality.ctor, .arti])
  func nextChangeIsTheTimelinesNextEvent(plan: BootstrapPlan, personality: BootstrapPersonality) {
    let simulator = BootstrapSimulator(plan: plan, personality: personality)
    for step in 0..<400 {
      let time = Double(step) * 0.37 - 1
      let (state, next) = simulator.stateAndNextChange(at: time)
      #expect(state == simulator.state(at: time), "\(plan) at \(time)")
      let upcoming = simulator.events(after: max(time, -1), through: time + 1_000).first?.time
      if time < 0 {
        #expect(next == 0, "\(plan) before the start")
      } else {
        #expect(next == upcoming, "\(plan) at \(time)")
      }
      // Control: the state really holds until then (just before the next change).
      if let next, next > time, time >= 0 {
        #expect(simulator.state(at: next - 1e-9) == state, "\(plan) before \(next)")
      }
    }
  }

  /// A plan with no event left (healthy, done) reports none, so the mock keeps its state.
  @Test func settledPlansHaveNoNextChange() {
    let healthy = BootstrapSimulator(plan: .healthy(after: 5), personality: .ctor)
    #expect(healthy.stateAndNextChange(at: 5).nextChange == nil)
    #expect(healthy.stateAndNextChange(at: 4.9).nextChange != nil)
    #expect(healthy.stateAndNextChange(at: 5).state.isReady)
  }
}
