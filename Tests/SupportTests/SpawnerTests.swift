import Foundation
import Testing

@testable import FailClosedSupport

@Suite struct SpawnerTests {
  @Test func captureKeepsStdoutAndStderrApartAndFeedsStdin() throws {
    let output = try Spawner.capture(
      ["sh", "-c", "cat; echo to-stderr >&2; exit 3"], stdin: "from stdin\n")
    #expect(output.status == 3)
    #expect(output.stdout == "from stdin\n")
    #expect(output.stderr == "to-stderr\n")
  }

  @Test func captureRunsInTheDirectoryAsked() throws {
    let output = try Spawner.capture(["pwd"], currentDirectory: "/tmp")
    #expect(output.status == 0)
    #expect(output.stdout == "/tmp\n")
    #expect(try Spawner.capture(["pwd"]).stdout == FileManager.default.currentDirectoryPath + "\n")
  }

  @Test func aChildKilledBySignalReports128PlusTheSignal() throws {
    let pid = try Spawner.spawn(["sleep", "30"], actions: FileActions())
    #expect(Spawner.poll(pid) == nil, "still running")
    kill(pid, SIGTERM)
    #expect(Spawner.wait(pid) == 128 + SIGTERM)
  }

  @Test func aMissingProgramIsAnError() {
    #expect(throws: SystemError.self) {
      try Spawner.capture(["/nonexistent/failclosed-no-such-program"])
    }
  }

  /// A child whose parent is no longer the process that forked it (a harness SIGKILLed
  /// between the fork and the exec) never starts its program: here it is told to expect
  /// another parent, as if this one had died.
  @Test func aChildWhoseParentIsGoneNeverExecs() throws {
    let marker = NSTemporaryDirectory() + "fc-spawn-orphan-\(getpid())"
    defer { unlink(marker) }
    var started: pid_t?
    #expect {
      started = try Spawner.spawn(
        ["touch", marker], actions: FileActions(), newProcessGroup: false, environment: nil,
        diesWithCallingThread: true, parent: getppid())
    } throws: { ($0 as? SystemError)?.code == ESRCH }
    if let started { _ = Spawner.wait(started) }
    #expect(!FileManager.default.fileExists(atPath: marker), "the program ran")
    // The same child with its real parent runs.
    let pid = try Spawner.spawn(["touch", marker], actions: FileActions())
    #expect(Spawner.wait(pid) == 0)
    #expect(FileManager.default.fileExists(atPath: marker))
  }

  /// A child spawned to die with its caller gets SIGKILL when the calling thread ends (the
  /// harness's death ends every thread): here a thread that spawns `sleep 30` and ends.
  @Test func aChildBoundToItsThreadDiesWhenTheThreadEnds() throws {
    let spawned = SpawnedPID()
    let thread = Thread {
      spawned.set(
        try? Spawner.spawn(["sleep", "30"], actions: FileActions(), diesWithCallingThread: true))
    }
    thread.start()
    let pid = try #require(spawned.wait())
    // The child's end is the event waited for (bounded: a child that lives on fails the test).
    var status: Int32?
    let deadline = DispatchTime.now().uptimeNanoseconds + 10_000_000_000
    while status == nil && DispatchTime.now().uptimeNanoseconds < deadline {
      status = Spawner.poll(pid)
      if status == nil { usleep(10_000) }
    }
    if status == nil {
      kill(pid, SIGKILL)
      _ = Spawner.wait(pid)
    }
    #expect(status == 128 + SIGKILL)
  }
}

/// A pid handed from a spawning thread to the test.
private final class SpawnedPID: @unchecked Sendable {
  private let lock = NSLock()
  private let ready = DispatchSemaphore(value: 0)
  private var pid: pid_t?

  func set(_ value: pid_t?) {
    lock.withLock { pid = value }
    ready.signal()
  }

  func wait() -> pid_t? {
    ready.wait()
    return lock.withLock { pid }
  }
}
