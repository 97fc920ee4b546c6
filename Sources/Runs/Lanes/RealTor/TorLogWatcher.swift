import FailClosedSupport
import Foundation
import Scenarios
import Testnet

/// Reads a tor's logs as they grow (notice.log, and bootstrap-problems.log with the control
/// domain at info level, where tor reports every bootstrap problem from the first) and stamps
/// each new bootstrap step and problem with the time it was first seen: tor's own account,
/// beside what its controller reported.
public final class TorLogWatcher: @unchecked Sendable {
  public let directory: String
  private let clock: any HarnessClock
  private let origin: Double
  private let lock = NSLock()
  private var seenSteps = 0
  private var seenProblems = 0
  private var entries: [TorTimelineEntry] = []

  /// `directory` holds the logs (the app's `<state-dir>/tor`); times are seconds since `origin`
  /// on `clock`.
  public init(directory: String, clock: any HarnessClock, origin: Double) {
    self.directory = directory
    self.clock = clock
    self.origin = origin
  }

  public var noticeLog: String { read("notice.log") }

  private func read(_ name: String) -> String {
    (try? String(contentsOfFile: directory + "/" + name, encoding: .utf8)) ?? ""
  }

  /// Reads new lines; returns the whole timeline so far.
  @discardableResult
  public func poll() -> [TorTimelineEntry] {
    let steps = BootstrapLogLine.all(in: noticeLog)
    let problems = BootstrapProblemLine.all(in: read("bootstrap-problems.log"))
    let now = clock.now - origin
    return lock.withLock {
      for step in steps.dropFirst(seenSteps) {
        entries.append(
          TorTimelineEntry(
            time: now, source: .log, phase: TorTimelineEntry.bootstrapPhase,
            progress: step.progress, tag: step.tag, summary: step.summary))
      }
      for problem in problems.dropFirst(seenProblems) {
        entries.append(
          TorTimelineEntry(
            time: now, source: .log, phase: TorTimelineEntry.problemPhase,
            progress: problem.progress, tag: problem.tag, summary: problem.warning,
            reason: problem.reason, count: problem.count,
            detail: problem.hostAddress.map { "host \($0)" }))
      }
      seenSteps = max(seenSteps, steps.count)
      seenProblems = max(seenProblems, problems.count)
      return entries
    }
  }

  /// The last `lines` lines of the notice log, for a failure's evidence.
  public func tail(_ lines: Int = 25) -> String {
    noticeLog.split(separator: "\n").suffix(lines).joined(separator: "\n")
  }
}
