/// A subcommand of `failclosed`: its name, its help text, its options, and what it does.
public protocol Command: Sendable {
  var name: String { get }
  var summary: String { get }
  /// The usage line(s) and a description, printed by `--help` above the option list.
  var usage: String { get }
  var options: [OptionSpec] { get }
  /// The words the first positional argument takes (`testnet up|status|down`), for shell
  /// completion; empty: file names.
  var positionalWords: [String] { get }
  /// Runs the command and returns the process exit code.
  func run(_ arguments: ParsedArguments) async throws -> Int32
}

/// Exit codes, Whonix's convention.
public enum ExitCode {
  public static let pass: Int32 = 0
  public static let leak: Int32 = 5
  public static let inconclusive: Int32 = 2
  public static let usage: Int32 = 2

  /// The exit code when the verdict was printed but its report could not be written: a leak
  /// or failure keeps its 5; a pass without its report is not a pass (2).
  public static func afterReportFailure(_ code: Int32) -> Int32 {
    code == pass ? inconclusive : code
  }
}

extension Command {
  public var positionalWords: [String] { [] }

  public var helpText: String {
    var lines = [usage, ""]
    if !options.isEmpty {
      lines.append("Options:")
      for option in options {
        let left: String
        let dash = option.name.count == 1 ? "-" : "--"
        switch option.kind {
        case .flag: left = "\(dash)\(option.name)"
        case .single: left = "\(dash)\(option.name) \(option.valueName)"
        case .repeated: left = "\(dash)\(option.name) \(option.valueName) (repeatable)"
        }
        lines.append(
          "  " + left.padding(toLength: max(left.count, 34), withPad: " ", startingAt: 0) + "  "
            + option.help)
      }
    }
    lines.append("  --help                              show this help")
    return lines.joined(separator: "\n")
  }
}
