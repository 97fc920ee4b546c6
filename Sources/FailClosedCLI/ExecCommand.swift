import Audit
import FailClosedSupport
import Foundation
import Sandbox

/// `failclosed exec [--allow HOST:PORT ...] [--no-tor] [--report DIR] [--grace S] -- CMD ARGS...`
public struct ExecCommand: Command {
  public init() {}
  public let name = "exec"
  public let summary = "run any program in the sandbox and audit every packet it sends"
  public let usage = """
    Usage: failclosed exec [--allow HOST:PORT ...] [--no-tor] [--report DIR] [--grace SECONDS]
                           [--timeout SECONDS] -- CMD ARGS...

    Builds a fresh sandbox (device, censor and world network namespaces), opens a capture on
    the device's link, proves it with a positive-control packet, starts the mock Tor on
    127.0.0.1:39050 inside the device (unless --no-tor), runs CMD there, waits for its whole
    process tree (daemonised children included) and a grace period, then judges every packet
    the device sent. Allowed: the fake Tor network's guards (\(AddressPlan.guards.map(\.description).joined(separator: ", "))) and --allow.
    The device resolves names through the world's resolver (\(AddressPlan.resolverV4)), so a
    program that resolves locally sends a real DNS packet, and leaks.

    Exit codes: 0 pass, 5 leak, 2 inconclusive or setup error.
    """
  public let options: [OptionSpec] = [
    OptionSpec(
      "allow", .repeated, valueName: "HOST:PORT", help: "a further allowed destination"),
    OptionSpec("no-tor", .flag, help: "do not start the mock Tor"),
    OptionSpec(
      "report", .single, valueName: "DIR", help: "write DIR/report.json and DIR/capture.pcap"),
    OptionSpec(
      "grace", .single, valueName: "SECONDS",
      help: "keep capturing this long after the process tree ends (default 3, at most 86400)"),
    OptionSpec(
      "timeout", .single, valueName: "SECONDS",
      help: "kill the process tree after this long (default 120, at most 86400)"),
  ]

  public func run(_ arguments: ParsedArguments) async throws -> Int32 {
    guard !arguments.trailing.isEmpty else {
      throw UsageError("missing the command: failclosed exec [options] -- CMD ARGS...")
    }
    if let stray = arguments.positional.first {
      throw UsageError("unexpected '\(stray)' before '--' (the command goes after '--')")
    }
    var allow: [Endpoint] = []
    for text in arguments.all("allow") {
      guard let endpoint = Endpoint(text) else {
        throw UsageError("--allow: expected HOST:PORT (e.g. 10.66.1.80:443), got '\(text)'")
      }
      allow.append(endpoint)
    }
    let options = SandboxExec.Options(
      command: arguments.trailing, allow: allow, tor: !arguments.has("no-tor"),
      grace: try arguments.seconds("grace") ?? 3, timeout: try arguments.seconds("timeout") ?? 120,
      reportDirectory: arguments.value("report"))
    let result: SandboxExec.Result
    do {
      result = try await SandboxExec.run(options)
    } catch {
      FailClosedMain.printError("failclosed exec: setup error: \(error)")
      return ExitCode.inconclusive
    }
    print(AuditSummary.text(result.report, source: result.pcapPath))
    let status = result.commandStatus.map { "exit \($0)" } ?? "killed at the timeout"
    print(
      "  command: \(result.command.joined(separator: " ")) (\(status)); sandbox \(result.prefix): "
        + "set-up \(Int(result.setupMilliseconds)) ms, teardown \(Int(result.teardownMilliseconds)) ms"
    )
    if let reportError = result.reportError {
      FailClosedMain.printError("failclosed exec: --report: \(reportError)")
      return ExitCode.afterReportFailure(result.report.verdict.exitCode)
    }
    return result.report.verdict.exitCode
  }
}
