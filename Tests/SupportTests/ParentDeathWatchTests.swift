import FailClosedSupport
import Foundation
import Testing

/// The harness tells each child who started it (ParentDeathWatch), and a watch ends when that
/// process is gone.
@Suite struct ParentDeathWatchTests {
  /// Canary: a child inheriting the environment names this process, not whoever started us
  /// (a variable inherited from our own parent is replaced).
  @Test func aChildIsToldWhichProcessStartedIt() throws {
    let output = try Spawner.capture(["sh", "-c", "echo \"$FAILCLOSED_PARENT_PID\""])
    #expect(output.stdout == "\(getpid())\n")
    // A child given its own environment (a program under test) gets only that.
    let pid = try Spawner.spawn(
      ["sh", "-c", "test -z \"$FAILCLOSED_PARENT_PID\""], actions: FileActions(),
      environment: ["PATH=/usr/bin:/bin"])
    #expect(Spawner.wait(pid) == 0)
  }

  /// A parent already exited and reaped is gone at once; this process is not; with no
  /// variable, nothing is watched.
  @Test func aWatchEndsWhenTheParentIsGone() throws {
    let child = try Spawner.spawn(["true"], actions: FileActions())
    _ = Spawner.wait(child)
    #expect(ParentDeathWatch.isGone(child))
    #expect(!ParentDeathWatch.isGone(getpid()))
    let fired = DispatchSemaphore(value: 0)
    let watched = ParentDeathWatch.start(
      environment: [ParentDeathWatch.environmentName: String(child)]
    ) { fired.signal() }
    #expect(watched == child)
    #expect(fired.wait(timeout: .now() + 10) == .success)
    #expect(ParentDeathWatch.start(environment: [:]) { Issue.record("watched nothing") } == nil)
  }
}
