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
    let inPair = try LinuxCalls.pipe()
    let outPair = try LinuxCalls.pipe()
    let errPair = try LinuxCalls.pipe()
    let inPipe = [inPair.read, inPair.write]
    let outPipe = [outPair.read, outPair.write]
    let errPipe = [errPair.read, errPair.write]
    let actions = FileActions()
    actions.dup(inPipe[0], to: 0)
    actions.dup(outPipe[1], to: 1)
    actions.dup(errPipe[1], to: 2)
    let pid: pid_t
    do {
      pid = try Spawner.spawn(arguments, actions: actions, newProcessGroup: false)
    } catch {
      for fd in inPipe + outPipe + errPipe { close(fd) }
      throw error
    }
    close(inPipe[0])
    close(outPipe[1])
    close(errPipe[1])
    if let stdin {
      _ = Array(stdin.utf8).withUnsafeBytes { write(inPipe[1], $0.baseAddress, $0.count) }
    }
    close(inPipe[1])
    let (out, err) = drain(outPipe[0], errPipe[0])
    close(outPipe[0])
    close(errPipe[0])
    let status = Spawner.wait(pid)
    return CommandOutput(
      status: status, stdout: String(decoding: out, as: UTF8.self),
      stderr: String(decoding: err, as: UTF8.self))
  }

  /// Reads two pipes to end of file without letting either fill up.
  private static func drain(_ a: Int32, _ b: Int32) -> ([UInt8], [UInt8]) {
    var buffers: [[UInt8]] = [[], []]
    var fds = [
      pollfd(fd: a, events: Int16(POLLIN), revents: 0),
      pollfd(fd: b, events: Int16(POLLIN), revents: 0),
    ]
    var chunk = [UInt8](repeating: 0, count: 16384)
    // Bounded: a command that prints forever is cut off after 64 MiB.
    while fds.contains(where: { $0.fd >= 0 }), buffers[0].count + buffers[1].count < 64 << 20 {
      if poll(&fds, 2, 30_000) <= 0 && errno != EINTR { break }
      for index in 0..<2 where fds[index].fd >= 0 && fds[index].revents != 0 {
        let n = chunk.withUnsafeMutableBytes { read(fds[index].fd, $0.baseAddress, $0.count) }
        if n > 0 {
          buffers[index] += chunk.prefix(n)
        } else if n == 0 || errno != EINTR {
          fds[index].fd = -1
        }
      }
    }
    return (buffers[0], buffers[1])
  }
}
