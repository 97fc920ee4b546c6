import Foundation

/// Runs a short-lived helper program (tor-gencert, tor --list-fingerprint) to completion,
/// optionally behind a launcher prefix such as `ip netns exec NS`, and returns its output.
enum ToolRunner {
  @discardableResult
  static func run(
    _ arguments: [String], prefix: [String] = [], input: String? = nil,
    currentDirectory: String? = nil
  ) throws -> String {
    let full = prefix + arguments
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = full
    if let currentDirectory {
      process.currentDirectoryURL = URL(fileURLWithPath: currentDirectory)
    }
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    let stdin = Pipe()
    process.standardInput = stdin
    try process.run()
    if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
    try? stdin.fileHandleForWriting.close()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self)
    guard process.terminationStatus == 0 else {
      throw TestnetError.toolFailed(
        command: full.joined(separator: " "), status: process.terminationStatus,
        output: String(text.suffix(600)))
    }
    return text
  }
}
