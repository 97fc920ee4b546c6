import FailClosedSupport
import Foundation
import Scenarios

/// The pipeline's side of the event clock (``EventClock``), the only code that moves the
/// run's time. Each turn of its wait for the app: while a process holds (a wait the kernel
/// times in real time), time runs at the scale for the real time since the last turn; else it
/// reads the page's slots, samples the processes that hold them (`/proc`: threads, CPU time,
/// the device's packet counters) a few times over about 1 ms, asks ``IdleJudge``, and on
/// "idle" moves the time to the earliest deadline. Either way time never passes a pending
/// deadline, so a timer is never late; while anything works and nothing holds, it stands
/// still. Every move is logged.
final class EventClockStepper {
  let page: ClockPage
  let factor: Double
  let epoch: MonotonicInstant
  /// The run's world and censor namespaces (inodes): the harness's own threads there (the
  /// world's services, the censor's closer and resolver) answer the device, and one still
  /// working on an answer is work the device waits for.
  let harnessNamespaces: Set<UInt64>
  private(set) var jumps: [ClockSkip.Jump] = []
  /// Real seconds between samples of one decision. The samples' comparison (the same threads,
  /// the same CPU time, the same packets) is what catches work between two reads of `/proc`,
  /// not the window's length: a wake-up (a futex, a packet, a timer) makes its thread runnable
  /// at once, so work in flight shows as a thread not asleep or CPU time that moved.
  static let sampleGap = 0.0001
  static let samples = 3
  /// Real seconds between turns of the pipeline's wait: 50 µs for the first four turns after
  /// a move (the work after a jump to one of bitchat's polls takes a fraction of a
  /// millisecond, and a run is hundreds of such jumps; a busy turn costs one read, of the
  /// thread last found awake), then doubling up to 8 ms, so a run that is busy or holds costs
  /// the machine little (six runs side by side share two cores).
  static let pollGaps = (first: 0.00005, last: 0.008)
  private var turnsWithoutJump = 0
  /// The harness's own threads' namespaces, kept from decision to decision (reading them is
  /// most of a sample's cost: the harness runs six runs' worth of threads).
  private var threadNamespaces = ThreadNamespaceCache()
  /// Each thread's stat and schedstat files, kept open: a sample rereads them (pread at 0)
  /// instead of opening two files per thread.
  private let threadFiles = ThreadStatFiles()
  /// The real instant of the last turn.
  private var lastTurn: MonotonicInstant?
  /// The order (``ClockPage/Order``) of the processes last woken for a deadline due.
  private var kickedOrder = ClockPage.Order.torSide
  /// The real instant of the last turn that found the run idle with a hold: a held wait's
  /// share of real time is counted from it.
  private var lastIdleHeldTurn: MonotonicInstant?
  var pollGap: Double {
    let doublings = max(0, turnsWithoutJump - 3)
    return min(Self.pollGaps.first * Double(1 << min(doublings, 12)), Self.pollGaps.last)
  }

  /// Virtual nanoseconds the time never passes: past the scenario's end only the mock's
  /// far-off waits are left (its plan's next step an hour ahead), and the app is ending.
  let horizon: Int64

  init(
    page: ClockPage, factor: Double, epoch: MonotonicInstant, harnessNamespaces: Set<UInt64> = [],
    horizon: Double = 31_536_000
  ) {
    self.horizon = Int64(horizon * 1e9)
    self.page = page
    self.factor = factor
    self.epoch = epoch
    self.harnessNamespaces = harnessNamespaces
  }

  var nowNanoseconds: Int64 { page.nowNanoseconds }

  var now: Double { Double(nowNanoseconds) / 1e9 }

  /// Moves the time when the run is idle or holds; `pipelineNext` is the pipeline's next
  /// change (virtual s).
  @discardableResult
  func tryJump(pipelineNext: Double?) -> JumpDecision {
    let decision = decide(pipelineNext: pipelineNext)
    if case .jump = decision { turnsWithoutJump = 0 } else { turnsWithoutJump += 1 }
    return decision
  }

  private func decide(pipelineNext: Double?) -> JumpDecision {
    let next = pipelineNext.map { Int64(($0 * 1e9).rounded(.up)) }
    // A process that has ended (a crashed mock, a zombie until reaped) waits for nothing.
    for index in 0..<ClockPage.slotCount {
      let pid = page.slot(index).pid
      if pid != 0, !RunActivityProbe.isAlive(pid, files: threadFiles) { page.releaseSlot(index) }
    }
    let turn = MonotonicInstant.now
    let sinceLastTurn = lastTurn.map { turn.seconds(since: $0) } ?? 0
    lastTurn = turn
    let keepsRealTime = page.slots.contains { $0.holds >= RunClockHold.wholeRun }
    let holding = page.slots.contains { $0.holds > 0 }
    // The processes due now go in their order (the pipeline's own changes at this instant
    // were applied before the turn): the Tor side's at once (a deadline published just as the
    // time passed it is woken too, never left); the app's once the Tor side has nothing due
    // and the run is idle again, its step at this instant done.
    if let order = page.lowestDueOrder {
      kickedOrder = order
      if order == ClockPage.Order.torSide || keepsRealTime {
        page.kickDue(order: order)
        return .busy("a deadline is due")
      }
      let idle = idleDecision(pipelineNext: next, holding: holding, allowDue: true)
      guard case .jump = idle else { return idle }
      page.kickDue(order: order)
      return .busy("a deadline is due")
    }
    // A process that keeps real time for the whole run: its waits are real, so the time runs
    // at the scale whether or not the run works (pins and deadlines still stop it).
    if keepsRealTime {
      lastIdleHeldTurn = nil
      let deadlines = page.slots.compactMap(\.deadline) + [next].compactMap { $0 }
      return flow(realSeconds: sinceLastTurn, earliest: deadlines.min() ?? .max)
    }
    // The real time since the last turn that found the run idle with a hold: what the held
    // wait took while nothing of the run worked.
    let idleHeldFor = holding ? lastIdleHeldTurn.map { turn.seconds(since: $0) } : nil
    lastIdleHeldTurn = nil
    let decision = idleDecision(pipelineNext: next, holding: holding)
    guard case .jump(let target) = decision else { return decision }
    if holding {
      lastIdleHeldTurn = turn
      return flow(realSeconds: idleHeldFor ?? 0, earliest: target)
    }
    guard target <= horizon else { return .nothingPending }
    return move(to: target, held: false) ? decision : .busy("a deadline is due")
  }

  /// Whether the run is idle (every thread asleep, nothing on the wire, no deadline due), and
  /// the earliest deadline; with `holding`, its waits in real time do not count as work.
  private func idleDecision(pipelineNext next: Int64?, holding: Bool, allowDue: Bool = false)
    -> JumpDecision
  {
    // Cheap first: no sampling while nothing waits.
    let quick = IdleJudge.decide(
      slots: page.slots, pipelineNext: next, now: nowNanoseconds,
      samples: [
        ActivitySample(threads: [:], packets: 0), ActivitySample(threads: [:], packets: 0),
      ],
      allowHolds: holding, allowDue: allowDue)
    guard case .jump = quick else { return quick }
    // Each sample is judged against the one before as it comes: the first sign of work ends
    // the decision (most turns are busy, and reading /proc is most of a turn's cost).
    var samples: [ActivitySample] = []
    threadNamespaces.beginDecision()
    for index in 0..<Self.samples {
      if index > 0 { SystemClock().sleepBlocking(seconds: Self.sampleGap) }
      // States in the first and last samples (an awake thread between shows in its CPU time);
      // the task lists once (a thread started since was started by one that ran).
      guard
        let sample = RunActivityProbe.sample(
          pids: page.slots.map(\.pid), harnessNamespaces: harnessNamespaces,
          namespaceOf: &threadNamespaces, files: threadFiles,
          states: index == 0 || index == Self.samples - 1, listTasks: index == 0)
      else {
        return .busy("a process could not be read")
      }
      let sofar = IdleJudge.decide(
        slots: page.slots, pipelineNext: next, now: nowNanoseconds,
        samples: [samples.last ?? sample, sample], allowHolds: holding, allowDue: allowDue)
      guard case .jump = sofar else { return sofar }
      samples.append(sample)
    }
    // The slots as they are now (a deadline published while sampling counts).
    return IdleJudge.decide(
      slots: page.slots, pipelineNext: next, now: nowNanoseconds, samples: samples,
      allowHolds: holding, allowDue: allowDue)
  }

  /// While a process holds and nothing else works (or a process keeps real time for the whole
  /// run): that real time at the scale, never past the earliest pending deadline (whose process then runs before the time
  /// goes on) nor the horizon.
  private func flow(realSeconds: Double, earliest: Int64) -> JumpDecision {
    let now = nowNanoseconds
    let target = min(now + Int64(max(0, realSeconds) * factor * 1e9), earliest, horizon)
    guard target > now else { return .busy("a process holds; the time runs from the next turn") }
    _ = move(to: target, held: true)
    return .busy("a process holds: the time runs at the scale while the run waits")
  }

  /// After a jump, waits (at most `realSeconds`, yielding) until every waiter due has taken
  /// its deadline: until then the run is not idle, and a turn would only find it so.
  func awaitDueWaiters(realSeconds: Double = 0.002) {
    let real = SystemClock()
    while real.now < realSeconds {
      let now = nowNanoseconds
      let due = page.slots.contains { ($0.deadline ?? .max) <= now && $0.order == kickedOrder }
      if !due { return }
      sched_yield()
    }
  }

  /// Moves the page's time to `target` and logs it; false when it had already passed.
  private func move(to target: Int64, held: Bool) -> Bool {
    let before = nowNanoseconds
    guard target > before else { return false }
    let unixTime = MonotonicInstant.now.unixTime
    guard page.advance(to: target) else { return false }
    // The run was idle: the Tor side due at the new instant goes first, else the app at once.
    if let order = page.lowestDueOrder {
      kickedOrder = order
      page.kickDue(order: order)
    }
    jumps.append(
      ClockSkip.Jump(
        unixTime: unixTime, before: Double(before) / 1e9, after: Double(target) / 1e9,
        held: held))
    return true
  }
}
