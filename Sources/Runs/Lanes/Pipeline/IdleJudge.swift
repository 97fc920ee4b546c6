import FailClosedSupport

/// What the run's processes were doing at one instant, as `/proc` shows it: each thread's
/// state and CPU time, and the device's packet counters (every interface of its namespace,
/// loopback included: the app talks to the mock over it).
struct ActivitySample: Equatable, Sendable {
  struct Thread: Equatable, Sendable {
    /// The state letter of /proc/PID/task/TID/stat (S sleeping, R running, D disk, ...); nil
    /// in a sample that read CPU times only.
    var state: Character?
    /// Nanoseconds on a CPU so far (schedstat's first field).
    var runNanoseconds: UInt64
  }

  /// By thread id.
  var threads: [Int32: Thread]
  /// Packets received and sent on every interface of the device's namespace.
  var packets: UInt64
}

/// The event clock's one decision: jump, or not. Conservative: a wrong jump changes what
/// the app sees (a timeout that did not happen in its time), a missed one only costs real time.
enum JumpDecision: Equatable, Sendable {
  /// Skip the clock forward to this virtual nanosecond.
  case jump(to: Int64)
  /// Something works or waits in real time; why.
  case busy(String)
  /// Nothing waits on the clock at all: nothing to jump to.
  case nothingPending
}

enum IdleJudge {
  /// Decides from the page's slots (what each process waits for), the pipeline's own next
  /// change (virtual ns, nil: none), the run's virtual time `now` and samples taken over a
  /// short window (at least two, oldest first). Idle means: no process holds, none has a
  /// deadline already due (its waiter is about to resume a sleeper), every thread of every
  /// sample asleep (S), the same threads with the same CPU time in every sample, and the same
  /// packet counters. Then the jump goes to the earliest deadline of all, never past one.
  ///
  /// With `allowHolds` (the runner lets time run at the scale while a process holds and the
  /// rest waits), a hold is not work, and with no deadline at all the answer is a jump to
  /// `Int64.max` (the caller caps it).
  ///
  /// With `allowDue` (the runner asks whether the Tor side's step at this instant is done
  /// before it wakes the app due at the same instant) a deadline due is not work either.
  static func decide(
    slots: [ClockPage.Slot], pipelineNext: Int64?, now: Int64, samples: [ActivitySample],
    allowHolds: Bool = false, allowDue: Bool = false
  ) -> JumpDecision {
    if !allowHolds, let holding = slots.first(where: { $0.holds > 0 }) {
      return .busy("process \(holding.pid) holds \(holding.holds) real-time wait(s)")
    }
    let deadlines = slots.compactMap(\.deadline) + [pipelineNext].compactMap { $0 }
    guard let target = deadlines.min() ?? (allowHolds ? Int64.max : nil) else {
      return .nothingPending
    }
    if target <= now && !allowDue { return .busy("a deadline is due") }
    guard samples.count >= 2, let first = samples.first else {
      return .busy("fewer than two samples")
    }
    for sample in samples {
      if let running = sample.threads.first(where: { ($0.value.state ?? "S") != "S" }) {
        return .busy("thread \(running.key) in state \(running.value.state ?? "?")")
      }
      if Set(sample.threads.keys) != Set(first.threads.keys) {
        return .busy("threads came or went")
      }
      if let ran = sample.threads.first(where: {
        first.threads[$0.key]?.runNanoseconds != $0.value.runNanoseconds
      }) {
        return .busy("thread \(ran.key) ran")
      }
      if sample.packets != first.packets { return .busy("packets moved") }
    }
    return .jump(to: target)
  }
}
