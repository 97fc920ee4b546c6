import FailClosedCLI
import FailClosedSupport
import Foundation
import TestSupport
import Testing

@Suite struct ExecCommandTests {
  static func lines(_ arguments: [String]) -> [String] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/sbin/ip")
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try? process.run()
    process.waitUntilExit()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
  }

  @Test func refusesAMissingCommand() async {
    #expect(await FailClosedMain.run(["exec", "--no-tor"]) == ExitCode.usage)
    #expect(await FailClosedMain.run(["exec", "--allow", "nope", "--", "true"]) == ExitCode.usage)
  }

  @Test(
    .needsRoot,
    .needsFailclosedBinary,
    arguments: [SIGTERM, SIGINT])
  func aSignalToTheHarnessLeavesNothing(_ signalNumber: Int32) async throws {
    try #require(FailclosedBinary.built != nil, "\(FailclosedBinary.missing)")
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try #require(FailclosedBinary.built))
    process.arguments = ["exec", "--no-tor", "--grace", "0", "--", "sleep", "30"]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    let pid = process.processIdentifier
    // Find the harness's run by its pid file, then wait until the command runs in the device.
    var prefix: String?
    for _ in 0..<200 where prefix == nil {
      try await Task.sleep(nanoseconds: 50_000_000)
      let files = (try? FileManager.default.contentsOfDirectory(atPath: "/run/failclosed")) ?? []
      prefix = files.first { file in
        let text = try? String(contentsOfFile: "/run/failclosed/" + file, encoding: .utf8)
        return file.hasSuffix(".pid")
          && text?.trimmingCharacters(in: .whitespacesAndNewlines) == "\(pid)"
      }.map { String($0.dropLast(4)) }
    }
    let run = try #require(prefix)
    for _ in 0..<200 {
      if Self.lines(["netns", "pids", run + "-dev"]).count > 0 { break }
      try await Task.sleep(nanoseconds: 50_000_000)
    }
    #expect(Self.lines(["netns", "list"]).contains { $0.hasPrefix(run + "-dev") })
    kill(pid, signalNumber)
    for _ in 0..<200 where process.isRunning {
      try await Task.sleep(nanoseconds: 50_000_000)
    }
    #expect(!process.isRunning)
    #expect(process.terminationStatus == 128 + signalNumber)
    #expect(Self.lines(["netns", "list"]).filter { $0.hasPrefix(run) } == [])
    #expect(Self.lines(["-o", "link"]).filter { $0.contains(run) } == [])
    #expect(!FileManager.default.fileExists(atPath: "/etc/netns/\(run)-dev"))
    #expect(!FileManager.default.fileExists(atPath: "/run/failclosed/\(run).pid"))
  }
}
