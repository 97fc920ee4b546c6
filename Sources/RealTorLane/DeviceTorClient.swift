import FailClosedSupport
import Foundation
import Sandbox
import Testnet

/// Debian's tor as the device's Tor client: SOCKS on 127.0.0.1:39050 and a cookie-authenticated
/// control port on 127.0.0.1:39051 inside the device namespace, optionally bridges only. Its
/// bootstrap lines are stamped with the harness clock as they appear in the notice log.
public final class DeviceTorClient: @unchecked Sendable {
  public struct TimedLine: Sendable, Codable, Equatable {
    public let time: Double
    public let progress: Int
    public let tag: String
    public let summary: String
    /// Set on "Problem bootstrapping" lines: the reason (TIMEOUT, CONNECTREFUSED, ...).
    public let reason: String?
    public let count: Int?
  }

  public let client: TorClientProcess
  private let clock: any HarnessClock
  private let lock = NSLock()
  private var seenSteps = 0
  private var seenProblems = 0
  private var timeline: [TimedLine] = []

  public init(
    sandbox: SandboxRun, testnet: WorldTestnet, directory: String, bridges: [BridgeLine] = [],
    clock: any HarnessClock = SystemClock()
  ) throws {
    self.clock = clock
    let torrc = testnet.network.builder.client(
      dataDirectory: directory, socksPort: 39050, controlPort: 39051, bridges: bridges)
    client = try TorClientProcess(
      torrc: torrc, dataDirectory: directory, prefix: ["ip", "netns", "exec", sandbox.device.name])
    sandbox.recordProcess(client.pid, group: false)
  }

  /// Reads new log lines and stamps bootstrap progress and problems with the current time.
  public func poll() -> [TimedLine] {
    let steps = client.bootstrap
    let problems = client.problems
    let now = clock.now
    return lock.withLock {
      for step in steps.dropFirst(seenSteps) {
        timeline.append(
          TimedLine(
            time: now, progress: step.progress, tag: step.tag, summary: step.summary,
            reason: nil, count: nil))
      }
      for problem in problems.dropFirst(seenProblems) {
        timeline.append(
          TimedLine(
            time: now, progress: problem.progress, tag: problem.tag, summary: problem.warning,
            reason: problem.reason, count: problem.count))
      }
      seenSteps = max(seenSteps, steps.count)
      seenProblems = max(seenProblems, problems.count)
      return timeline
    }
  }

  /// Watches the log for `seconds`, returning early at 100%.
  public func observe(seconds: Double) async throws -> [TimedLine] {
    let start = clock.now
    while clock.now - start < seconds {
      if poll().contains(where: { $0.progress >= 100 && $0.reason == nil }) { break }
      try await clock.sleep(seconds: 0.1)
    }
    return poll()
  }

  public func stop() {
    client.stop()
    _ = poll()
  }
}
