import FailClosedSupport
import Foundation
import Testing

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
}
