import FailClosedSupport
import Vocabulary

extension ClockScheduler {
  /// The driver's scheduler: a timer that ran more than the harness's tolerance late writes a
  /// `clock.timerLate` state event (its value: seconds late), which the judge reads as the
  /// harness's lateness (Scenarios' ActionTiming), so the lane runs the scenario again.
  public static func reportingLateness(clock: any HarnessClock, log: AppEventLog)
    -> ClockScheduler
  {
    ClockScheduler(clock: clock, lateReport: HarnessLateness.tolerance) { deadline, ran in
      log.state("clock", "timerLate", .double(ran - deadline))
    }
  }
}
