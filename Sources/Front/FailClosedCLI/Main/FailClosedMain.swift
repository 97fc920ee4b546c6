import Foundation

/// The `failclosed` entry point: dispatches to a subcommand, prints help and usage errors.
public enum FailClosedMain {
  /// Every subcommand, in the order `failclosed --help` lists them.
  public static let commands: [any Command] = [
    VersionCommand(),
    TestnetCommand(),
    AuditCommand(),
    ExecCommand(),
    MockTorCommand(),
    GenPcapCommand(),
    AppCommand(),
    ProgramLaunchCommand(),
    LeakAuditCommand(),
    SoakCommand(),
    ReplayCommand(),
    CheckCommand(),
    OONICommand(),
    BitchatSourceCommand(),
    BitchatTestsCommand(),
    OnionBrowserSourceCommand(),
    CompletionCommand(),
  ]

  public static let overview = """
    failclosed: proves with packet captures that an app's Tor integration fails closed.

    Usage: failclosed <command> [options]
    """

  public static func helpText() -> String {
    var lines = [overview, "", "Commands:"]
    // The summaries line up after the longest name (a name is never cut).
    let width = (commands.map(\.name.count).max() ?? 0) + 2
    for command in commands {
      lines.append(
        "  " + command.name.padding(toLength: width, withPad: " ", startingAt: 0)
          + command.summary)
    }
    lines.append("")
    lines.append("Run 'failclosed <command> --help' for a command's options;")
    lines.append("'failclosed --version' for the versions of failclosed, tor, libpcap and OpenSSL.")
    lines.append("Exit codes: 0 pass, 5 leak or failed expectation, 2 inconclusive or setup error.")
    return lines.joined(separator: "\n")
  }

  /// Runs `arguments` (without the program name) and returns the exit code.
  public static func run(_ arguments: [String]) async -> Int32 {
    guard let first = arguments.first, first != "--help", first != "-h", first != "help" else {
      print(helpText())
      return arguments.isEmpty ? ExitCode.usage : ExitCode.pass
    }
    if first == "--version" {
      print(VersionCommand.text())
      return ExitCode.pass
    }
    guard let command = commands.first(where: { $0.name == first }) else {
      printError("failclosed: unknown command '\(first)'. Run 'failclosed --help' for the list.")
      return ExitCode.usage
    }
    let rest = Array(arguments.dropFirst())
    let beforeSeparator = rest.prefix { $0 != "--" }
    if beforeSeparator.contains("--help") || beforeSeparator.contains("-h") {
      print(command.helpText)
      return ExitCode.pass
    }
    do {
      let parsed = try ArgumentParser.parse(rest, options: command.options)
      return try await command.run(parsed)
    } catch let error as UsageError {
      printError("failclosed \(command.name): \(error)\nRun 'failclosed \(command.name) --help'.")
      return ExitCode.usage
    } catch {
      printError("failclosed \(command.name): \(error)")
      return ExitCode.inconclusive
    }
  }

  public static func printError(_ message: String) {
    // What was printed before (a verdict) comes out before the error, even through a pipe.
    fflush(nil)
    FileHandle.standardError.write(Data((message + "\n").utf8))
  }
}
