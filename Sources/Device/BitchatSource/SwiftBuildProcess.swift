import Foundation

/// `swift build` on a generated package, its output read as it comes: SwiftPM's step and
/// error lines go to `progress` (a first build takes minutes), and the whole text comes back
/// for the diagnostics' parser. The lane's build and the tests' build both run it.
enum SwiftBuildProcess {
  static func run(
    _ executable: String, _ arguments: [String], progress: @Sendable (String) -> Void
  ) throws -> (status: Int32, text: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    var text = ""
    var pending = Data()
    let handle = pipe.fileHandleForReading
    while true {
      let chunk = handle.availableData
      if chunk.isEmpty { break }
      pending += chunk
      while let newline = pending.firstIndex(of: 10) {
        let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
        pending = Data(pending[(newline + 1)...])
        text += line + "\n"
        if line.hasPrefix("[") || line.hasPrefix("Build") || line.contains("error:") {
          progress("  " + line)
        }
      }
    }
    text += String(decoding: pending, as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, text)
  }
}
