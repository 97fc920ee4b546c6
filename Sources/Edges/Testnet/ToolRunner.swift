import FailClosedSupport

/// Runs a short-lived helper program (tor-gencert, openssl) to completion through
/// ``Spawner``, optionally behind a launcher prefix such as `ip netns exec NS`, and returns what
/// it printed on stdout.
enum ToolRunner {
  @discardableResult
  static func run(
    _ arguments: [String], prefix: [String] = [], input: String? = nil,
    currentDirectory: String? = nil
  ) throws -> String {
    let full = prefix + arguments
    let output = try Spawner.capture(full, stdin: input ?? "", currentDirectory: currentDirectory)
    guard output.status == 0 else {
      throw TestnetError.toolFailed(
        command: full.joined(separator: " "), status: output.status,
        output: String((output.stdout + output.stderr).suffix(600)))
    }
    return output.stdout
  }
}
