import Foundation

/// Files of the repository (scripts, the action, the example workflow), found from this
/// source file's place, and a small runner for the tools the tests drive.
enum RepositoryFiles {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().path

  static func path(_ relative: String) -> String { root + "/" + relative }

  static func text(_ relative: String) throws -> String {
    try String(contentsOfFile: path(relative), encoding: .utf8)
  }

  /// Runs `executable` with `arguments`; returns its status and stdout+stderr.
  static func run(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
    directory: String? = nil
  ) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    let out = Pipe()
    process.standardOutput = out
    process.standardError = out
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
  }

  /// A fresh temporary directory, removed by the caller.
  static func temporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "failclosed-cli-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
  }
}
