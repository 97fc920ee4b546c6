import FailClosedSupport
import Foundation
import SystemUnderTest

/// `failclosed program-launch`: the black-box lane's app side (SystemUnderTest.ProgramLauncher),
/// which the lanes start in the device for `leak-audit --app -- CMD`. Prints the app driver's
/// event lines (docs/app-driver.md) for what is seen of the program from outside.
public struct ProgramLaunchCommand: Command {
  public init() {}
  public let name = "program-launch"
  public let summary = "run a program as a black box, printing its start, output and end as events"
  public let usage = """
    Usage: failclosed program-launch --duration SECONDS [--start-at SECONDS]
                                     [--after-bootstrap MOCK_LOG] [--env NAME=VALUE ...]
                                     [--cwd DIR] [--success-file PATH] [--output FILE]
                                     -- CMD ARGS...

    What `leak-audit --app` runs in the device for each scenario: starts CMD at --start-at
    (seconds after its own start; with --after-bootstrap, once the mock Tor's event log says
    100%, or half the duration later at most), in a process group of its own with stdin from
    /dev/null, and prints JSON lines: the start (state program.started: at-start,
    after-bootstrap or bootstrap-wait-ended), each line CMD prints (program.output, the first
    200, 300 characters each; --output keeps all of it), its exit status (program.exit), or,
    if it still runs at --duration, that it was stopped (program.killed, SIGTERM then SIGKILL),
    and whether --success-file exists at the end (program.file). A CMD that cannot start is
    program.error. Exits 0 whatever CMD did: its status is judged by the scenario.
    """
  public let options: [OptionSpec] = [
    OptionSpec("duration", .single, valueName: "SECONDS", help: "stop CMD after this long"),
    OptionSpec("start-at", .single, valueName: "SECONDS", help: "start CMD this long after launch"),
    OptionSpec(
      "after-bootstrap", .single, valueName: "MOCK_LOG",
      help: "start CMD once this mock Tor event log says 100%", values: .file),
    OptionSpec("env", .repeated, valueName: "NAME=VALUE", help: "set in CMD's environment"),
    OptionSpec(
      "cwd", .single, valueName: "DIR", help: "CMD's working directory", values: .directory),
    OptionSpec(
      "success-file", .single, valueName: "PATH",
      help: "record whether this file exists at the end",
      values: .file),
    OptionSpec(
      "output", .single, valueName: "FILE", help: "keep all CMD printed here", values: .file),
  ]

  public func run(_ arguments: ParsedArguments) async throws -> Int32 {
    guard !arguments.trailing.isEmpty else { throw UsageError("no command after --") }
    guard let duration = try arguments.seconds("duration", in: 0.1...ParsedArguments.maximumSeconds)
    else { throw UsageError("--duration SECONDS is required") }
    var options = ProgramLauncher.Options(arguments: arguments.trailing, duration: duration)
    options.startAt = try arguments.seconds("start-at") ?? 0
    options.afterBootstrapLog = arguments.value("after-bootstrap")
    options.workingDirectory = arguments.value("cwd")
    options.successFile = arguments.value("success-file")
    options.outputFile = arguments.value("output")
    for pair in arguments.all("env") {
      guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
        throw UsageError("--env \(pair): expected NAME=VALUE")
      }
      options.environment[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
    }
    ProgramLauncherSignals.install()
    // Started by the harness: end with it (SIGTERM, so the program's group goes too).
    ParentDeathWatch.start()
    let output = LineWriter()
    let log = AppEventLog(clock: SystemClock()) { output.write($0.jsonLine) }
    let launcher = ProgramLauncher(options: options)
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
      BlockingIO.detach("program.launcher") {
        launcher.run(log: log)
        done.resume()
      }
    }
    return ExitCode.pass
  }
}
