import Foundation
import TestSupport

/// Files of the repository (scripts, the action, the example workflow), found from this
/// source file's place, and a small runner for the tools the tests drive.
enum RepositoryFiles {
  static let root = repositoryRoot

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
  /// Writes a script the test then runs. Close-on-exec from the open on: a process another
  /// test spawns in the moment the file is open for writing would otherwise inherit the
  /// descriptor and keep it for its whole life, and running the script then fails with
  /// ETXTBSY (seen in CI: the action's leak-audit stand-in never ran).
  static func writeExecutable(_ text: String, to path: String) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
    guard fd >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
    defer { close(fd) }
    let bytes = Array(text.utf8)
    var written = 0
    while written < bytes.count {
      let count = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
      guard count > 0 else {
        throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
      }
      written += count
    }
    fchmod(fd, 0o755)
  }

  static func temporaryDirectory() throws -> String {
    let path = NSTemporaryDirectory() + "failclosed-cli-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
  }
}
