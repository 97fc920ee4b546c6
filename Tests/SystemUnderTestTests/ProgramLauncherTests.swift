import FailClosedSupport
import Foundation
import Testing

@testable import SystemUnderTest

/// The black box's launcher: what it records of a program from outside. Each case runs a real
/// program (sh, sleep) through it; the launcher's own waits are the events, never the test's.
@Suite struct ProgramLauncherTests {
  static func run(_ options: ProgramLauncher.Options) -> [AppEvent] {
    let log = AppEventLog(clock: SystemClock())
    ProgramLauncher(options: options).run(log: log)
    return log.events
  }

  static func program(_ events: [AppEvent], _ field: String) -> [AppEvent] {
    events.filter { $0["component"]?.description == "program" && $0["field"]?.description == field }
  }

  @Test func itRecordsTheStartEachLineAndTheExitStatus() throws {
    let directory = NSTemporaryDirectory() + "fc-launcher-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var options = ProgramLauncher.Options(
      arguments: ["/bin/sh", "-c", "echo one; echo two >&2; printf last; touch made; exit 7"],
      duration: 20)
    options.workingDirectory = directory
    options.environment = ["FC_WORD": "kept"]
    options.successFile = directory + "/made"
    options.outputFile = directory + "/out"
    let events = Self.run(options)
    #expect(events.first?["value"]?.description == "program")
    #expect(Self.program(events, "started").map { $0["value"]?.description } == ["at-start"])
    #expect(
      Self.program(events, "output").map { $0["value"]?.description } == ["one", "two", "last"])
    #expect(Self.program(events, "exit").map { $0["value"]?.description } == ["7"])
    #expect(Self.program(events, "killed").isEmpty)
    #expect(Self.program(events, "file").map { $0["value"]?.description } == [directory + "/made"])
    #expect(try String(contentsOfFile: directory + "/out", encoding: .utf8) == "one\ntwo\nlast")
  }

  @Test func itsEnvironmentAndStartTimeAreTheOnesAskedFor() {
    var options = ProgramLauncher.Options(
      arguments: ["/bin/sh", "-c", "echo \"$FC_WORD\""], duration: 20)
    options.environment = ["FC_WORD": "kept"]
    options.startAt = 0.3
    let events = Self.run(options)
    #expect(Self.program(events, "output").map { $0["value"]?.description } == ["kept"])
    let start = Self.program(events, "started").first?.time ?? 0
    #expect(start >= 0.3)
    #expect(events.first { $0.kind == .action }.map { $0.time >= 0.3 } == true)
  }

  @Test func aProgramStillRunningAtTheEndIsStoppedWithItsChildren() throws {
    let pidFile = NSTemporaryDirectory() + "fc-launcher-child-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: pidFile) }
    let events = Self.run(
      ProgramLauncher.Options(
        arguments: ["/bin/sh", "-c", "sleep 300 & echo $! > \(pidFile); wait"], duration: 1))
    #expect(Self.program(events, "exit").isEmpty)
    let killed = try #require(Self.program(events, "killed").first)
    #expect(killed.time >= 1)
    // Its child went with it (the program's own group).
    let child = Int32(
      (try String(contentsOfFile: pidFile, encoding: .utf8)).trimmingCharacters(
        in: .whitespacesAndNewlines))!
    // Gone, or a zombie waiting for init to reap it: either way it no longer runs.
    let state = (try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8))
      .flatMap { $0.split(separator: ")").last?.split(separator: " ").first }
    #expect(state == nil || state == "Z", "the child \(child) is \(state.map(String.init) ?? "?")")
  }

  @Test func aProgramThatCannotStartIsAnErrorNotAStart() {
    let events = Self.run(
      ProgramLauncher.Options(arguments: ["/nonexistent/program"], duration: 5))
    #expect(Self.program(events, "started").isEmpty)
    #expect(Self.program(events, "error").first?["value"]?.description.contains("ENOENT") == true)
  }

  @Test func afterBootstrapWaitsForTheMocksHundredPercentAndNoLonger() throws {
    let log = NSTemporaryDirectory() + "fc-launcher-mock-\(UUID().uuidString).jsonl"
    defer { try? FileManager.default.removeItem(atPath: log) }
    try #"{"event":"bootstrap","progress":100,"t":0}"#.write(
      toFile: log, atomically: true, encoding: .utf8)
    var options = ProgramLauncher.Options(arguments: ["/bin/true"], duration: 20)
    options.afterBootstrapLog = log
    let ready = Self.run(options)
    #expect(Self.program(ready, "started").first?["value"]?.description == "after-bootstrap")
    // A mock that never gets there: the program starts anyway at half the duration, saying so.
    try #"{"event":"bootstrap","progress":0,"t":0}"#.write(
      toFile: log, atomically: true, encoding: .utf8)
    options.duration = 1
    let never = Self.run(options)
    let started = try #require(Self.program(never, "started").first)
    #expect(started["value"]?.description == "bootstrap-wait-ended")
    #expect(started.time >= 0.5)
  }

  @Test func theOutputBecomesAtMostTwoHundredEventsOfBoundedLength() {
    let events = Self.run(
      ProgramLauncher.Options(
        arguments: [
          "/bin/sh", "-c",
          "i=0; while [ $i -lt 250 ]; do echo line$i; i=$((i+1)); done; head -c 5000 /dev/zero | tr '\\0' x",
        ], duration: 20))
    let lines = Self.program(events, "output")
    #expect(lines.count == ProgramLauncher.outputEventLimit)
    #expect(lines.allSatisfy { ($0["value"]?.description.count ?? 0) <= ProgramLauncher.lineLimit })
    #expect(Self.program(events, "exit").map { $0["value"]?.description } == ["0"])
  }
}
