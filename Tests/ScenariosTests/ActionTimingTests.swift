import Audit
import Foundation
import Testing

@testable import Lanes
@testable import Scenarios

/// A timed action the app performed late makes the run the harness's fault: inconclusive
/// (never a pass, never a failure of the app), a leak still a leak, and the batch runs it again.
@Suite struct ActionTimingTests {
  let scenario = makeScenario(
    [.noLeak], actions: [AppAction(at: 100, step: .revokeActivation)])

  func outcome(revokedAt time: Double, leaks: [ScenarioLeak] = []) -> ScenarioOutcome {
    makeOutcome(
      events: [
        ev(0.004, "action", ["action": "start"]),
        ev(time, "action", ["action": "revoke-activation"]),
      ], leaks: leaks)
  }

  @Test func anActionOnTimeIsJudgedAsUsual() {
    let judged = ExpectationJudge.judge(scenario, outcome(revokedAt: 100.2))
    #expect(judged.lateActions.isEmpty)
    #expect(judged.verdict == .pass)
  }

  @Test func anActionLateByMoreThanTheToleranceMakesTheRunInconclusiveNamingIt() {
    let judged = ExpectationJudge.judge(scenario, outcome(revokedAt: 102.023))
    #expect(judged.verdict == .inconclusive)
    #expect(judged.isHarnessLate)
    #expect(
      judged.reasons.contains {
        $0.contains("revoke-activation due at 100.0 s was performed at 102.023 s")
      })
  }

  /// One of the model's own timers late past the tolerance (its 75 s stall poll lost a turn
  /// and posted at 76.1 s): the run is the harness's fault, like a late action; a timer a
  /// little late is judged as usual.
  @Test func aTimerOfTheAppLateByMoreThanTheToleranceMakesTheRunInconclusive() {
    func judged(timerLate seconds: String) -> Judgement {
      var late = outcome(revokedAt: 100.2)
      late.events.append(ev(61.5, ActionTiming.lateTimerEvent, ["value": seconds]))
      return ExpectationJudge.judge(scenario, late)
    }
    let late = judged(timerLate: "0.696")
    #expect(late.verdict == .inconclusive)
    #expect(late.isHarnessLate)
    #expect(late.reasons.contains { $0.contains("the app's timer due at 60.804 s") })
    let onTime = judged(timerLate: "0.120")
    #expect(onTime.verdict == .pass)
    #expect(onTime.lateActions.isEmpty)
  }

  @Test func aLeakInALateRunIsStillALeak() {
    let judged = ExpectationJudge.judge(
      scenario, outcome(revokedAt: 103, leaks: [leak(.dns, at: 101)]))
    #expect(judged.verdict == .leak)
    #expect(!judged.isHarnessLate)
  }

  @Test func actionsAreMatchedInOrderAndOneTheAppNeverReportedIsNotATimingMatter() {
    let twice = makeScenario(
      [.noLeak],
      actions: [
        AppAction(at: 10, step: .revokeActivation), AppAction(at: 20, step: .revokeActivation),
      ])
    // The second revocation's event is the one at 20.1, not the first's at 10.
    let events = [
      ev(0, "action", ["action": "start"]), ev(10, "action", ["action": "revoke-activation"]),
      ev(20.1, "action", ["action": "revoke-activation"]),
    ]
    #expect(ActionTiming.lateActions(twice, events: events).isEmpty)
    #expect(ActionTiming.lateActions(twice, events: Array(events.prefix(2))).isEmpty)
    let late = ActionTiming.lateActions(
      twice, events: [events[0], events[1], ev(21, "action", ["action": "revoke-activation"])])
    #expect(late.map(\.due) == [20])
  }

  @Test func theBatchRunsALateScenarioAgainAndReportsTheRunSetAside() async {
    let runs = RunCounter()
    let outcome = await LateRunRetry.outcome(scenario) {
      runs.add()
      return self.outcome(revokedAt: runs.value == 1 ? 102.5 : 100.01)
    }
    #expect(runs.value == 2)
    #expect(outcome.earlierRuns.count == 1)
    #expect(outcome.earlierRuns[0].contains("2.5 s late"))
    #expect(ScenarioResult(scenario: scenario, outcome: outcome).verdict == .pass)
    // Always late: the attempts end, inconclusive, never a pass.
    let always = RunCounter()
    let last = await LateRunRetry.outcome(scenario) {
      always.add()
      return self.outcome(revokedAt: 105)
    }
    #expect(always.value == LateRunRetry.attempts)
    #expect(ScenarioResult(scenario: scenario, outcome: last).verdict == .inconclusive)
  }
}

extension ActionTimingTests {
  /// An app ended by a signal the run did not send (bitchat's driver, SIGTERMed by someone a
  /// second into a real-Tor run, looked like a normal end with every expectation failed): run
  /// again, the first run's reason kept; a leak in such a run is still the verdict.
  @Test func aRunWhoseAppWasEndedFromOutsideRunsAgainAndALeakInOneDoesNot() async {
    let runs = RunCounter()
    let reason = "the app was ended by SIGTERM, which the run did not send: pid 4242 (kill)"
    let outcome = await LateRunRetry.outcome(scenario) {
      runs.add()
      var outcome = self.outcome(revokedAt: 100.01)
      if runs.value == 1 {
        outcome.runError = reason
        outcome.interrupted = true
      }
      return outcome
    }
    #expect(runs.value == 2)
    #expect(outcome.earlierRuns == [reason])
    let leaked = RunCounter()
    let leaking = await LateRunRetry.outcome(scenario) {
      leaked.add()
      var outcome = self.outcome(revokedAt: 100.01, leaks: [leak(.dns, at: 3)])
      outcome.runError = reason
      outcome.interrupted = true
      return outcome
    }
    #expect(leaked.value == 1)
    #expect(ScenarioResult(scenario: scenario, outcome: leaking).verdict == .leak)
  }

  @Test func aRunWhoseProcessSetUpAfterTimeZeroRunsAgainAndOtherRunErrorsDoNot() async {
    let runs = RunCounter()
    let outcome = await LateRunRetry.outcome(scenario) {
      runs.add()
      var outcome = self.outcome(revokedAt: 100.01)
      if runs.value == 1 {
        outcome.runError = "the mock Tor finished setting up 0.263 s after the run's time 0"
        outcome.lateStart = true
      }
      return outcome
    }
    #expect(runs.value == 2)
    #expect(
      outcome.earlierRuns == ["the mock Tor finished setting up 0.263 s after the run's time 0"])
    // Canary: a run that broke for another reason is the verdict, not run again.
    let broken = RunCounter()
    let crashed = await LateRunRetry.outcome(scenario) {
      broken.add()
      var outcome = self.outcome(revokedAt: 100.01)
      outcome.runError = "the app exited with status 1"
      return outcome
    }
    #expect(broken.value == 1)
    #expect(ScenarioResult(scenario: scenario, outcome: crashed).verdict == .inconclusive)
  }
}

final class RunCounter: @unchecked Sendable {
  private(set) var value = 0
  func add() { value += 1 }
}

/// Code that sleeps on the wall clock (bitchat's) drifts: its `by` deadlines stretch by 1%, the
/// model's do not.
@Suite struct TimerDriftTests {
  let stall = makeScenario([.notification(name: "TorBootstrapDidStall", by: 76, count: 1)])

  func judged(postedAt time: Double, drift: Double) -> ExpectationResult {
    var outcome = makeOutcome(events: [ev(0, "TorWillStart"), ev(time, "TorBootstrapDidStall")])
    outcome.timerDrift = drift
    return ExpectationJudge.judge(stall, outcome).expectations[0]
  }

  @Test func aRealTimeAppsDeadlineStretchesByItsDriftAndNoMore() {
    let drift = ScenarioOutcome.realTimeTimerDrift
    let late = judged(postedAt: 76.07, drift: drift)
    #expect(late.status == .met)
    #expect(late.reason.contains("by 76.8 s"))
    // Past the stretched deadline it still fails, naming it.
    let later = judged(postedAt: 76.9, drift: drift)
    #expect(later.status == .failed)
    #expect(later.reason.contains("after 76 s (its timers may run 1% late"))
    // Canary: the model's deadline is exact.
    #expect(judged(postedAt: 76.07, drift: 0).status == .failed)
    #expect(judged(postedAt: 75.9, drift: 0).status == .met)
  }
}

/// Which exit statuses say the app was ended by a signal (the pipeline sends none before the
/// app has ended): the default action's and the drivers' handlers' 128 + SIGINT/TERM/KILL.
@Suite struct AppEndSignalTests {
  @Test func signalStatusesAreNamedAndTheAppsOwnStatusesAreNot() {
    #expect(AppEndSignal(status: 128 + SIGTERM)?.name == "SIGTERM")
    #expect(AppEndSignal(status: 128 + SIGINT)?.name == "SIGINT")
    #expect(AppEndSignal(status: 128 + SIGKILL)?.name == "SIGKILL")
    for own: Int32 in [0, 1, 2, 3, 5, 128 + SIGSEGV, 128 + SIGABRT] {
      #expect(AppEndSignal(status: own) == nil, "status \(own)")
    }
  }
}
