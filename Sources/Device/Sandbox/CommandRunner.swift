import FailClosedSupport
import Foundation

/// A command that exited with a failure, named with its arguments and what it printed, so a
/// failed `ip` or `nft` call reads "ip -n fc-1a2b3c-dev addr add ...: exit 2: RTNETLINK answers: ...".
public struct CommandError: Error, CustomStringConvertible, Sendable {
  public let command: [String]
  public let status: Int32
  public let stderr: String

  public var description: String {
    let text = stderr.trimmingCharacters(in: .whitespacesAndNewlines)
    return "\(command.joined(separator: " ")): exit \(status)\(text.isEmpty ? "" : ": " + text)"
  }
}

/// What a finished command printed.
public struct CommandOutput: Sendable {
  public let status: Int32
  public let stdout: String
  public let stderr: String
}

/// Runs short system commands (`ip`, `nft`) to completion, blocking the calling thread, which
/// must therefore be a dedicated one (see `BlockingIO`). Stdout and stderr are captured.
public enum CommandRunner {
  /// Runs `arguments` (the first is looked up in /usr/sbin, /sbin, /usr/bin, /bin) and throws
  /// ``CommandError`` when it exits non-zero.
  @discardableResult
  public static func run(_ arguments: [String], stdin: String? = nil) throws -> CommandOutput {
    let output = try capture(arguments, stdin: stdin)
    guard output.status == 0 else {
      throw CommandError(command: arguments, status: output.status, stderr: output.stderr)
    }
    return output
  }

  /// Runs `arguments` and returns its output whatever its exit status.
  public static func capture(_ arguments: [String], stdin: String? = nil) throws -> CommandOutput {
    let output = try Spawner.capture(arguments, stdin: stdin)
    return CommandOutput(status: output.status, stdout: output.stdout, stderr: output.stderr)
  }
}
