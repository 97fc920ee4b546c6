import Audit
import Capture
import FailClosedCLI
import FailClosedSupport
import Foundation
import Glibc
import Sandbox
import SyntheticTraffic
import TestSupport
import Testing

/// Numbers and paths from outside, found wanting by an adversarial probe: every number is
/// range-checked before anything is built, and a report that cannot be written never hides
/// the verdict.
@Suite struct OutsideInputTests {
  /// Runs the built binary; stdout and stderr in one stream, in the order written.
  static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try #require(FailclosedBinary.built))
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
  }

  /// A capture with one DNS leak (or only allowed traffic) in a fresh directory.
  static func capture(leak: Bool) throws -> (directory: String, path: String) {
    let directory = NSTemporaryDirectory() + "fc-outside-\(getpid())-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let path = directory + "/capture.pcap"
    let writer = try PcapWriter(path: path, linkType: .ethernet)
    let device = Endpoint("10.99.0.2:41000")!
    let packet =
      leak
      ? FrameBuilder.udpPacket(
        from: device, to: Endpoint("10.99.1.20:53")!,
        payload: FrameBuilder.dnsQuery(name: "outside.example"))
      : FrameBuilder.tcpPacket(from: device, to: Endpoint("10.99.1.10:9001")!, flags: 0x02)
    writer.write(timestamp: 1_000_000, frame: FrameBuilder.frame(.ethernet, ip: packet))
    writer.close()
    return (directory, path)
  }

  /// `exec --grace 1e11` crashed converting to UInt64 after the sandbox was built. Now it is a
  /// usage error before anything starts (no root needed: nothing is built).
  @Test(arguments: [
    (["--grace", "1e11"], "--grace: expected a number of seconds from 0 to 86400, got '1e11'"),
    (["--timeout", "1e11"], "--timeout: expected a number of seconds from 0 to 86400, got '1e11'"),
    (["--grace", "-1"], "--grace: expected a number of seconds from 0 to 86400, got '-1'"),
    (["--timeout", "nan"], "--timeout: expected a number of seconds from 0 to 86400, got 'nan'"),
    (["--timeout", "inf"], "--timeout: expected a number of seconds from 0 to 86400, got 'inf'"),
  ])
  func execDurationsAreRangeChecked(_ options: [String], _ message: String) async throws {
    #expect(throws: UsageError(message)) {
      _ = try ArgumentParser.parse(options, options: ExecCommand().options).seconds(
        options[0].replacingOccurrences(of: "--", with: ""))
    }
    #expect(await FailClosedMain.run(["exec"] + options + ["--", "true"]) == ExitCode.usage)
  }

  /// The library call checks too, before any namespace exists.
  @Test func sandboxExecRefusesAnOverflowingDurationBeforeBuilding() {
    var options = SandboxExec.Options(command: ["true"], grace: 1e11)
    #expect(throws: SandboxExec.OptionError.self) { try SandboxExec.validate(options) }
    options.grace = 3
    options.timeout = 120
    #expect(throws: Never.self) { try SandboxExec.validate(options) }
  }

  @Test func otherNumbersAreRangeChecked() async {
    for arguments in [
      ["mock-tor", "--time-scale", "1e-300"], ["mock-tor", "--handshake-timeout", "1e11"],
      ["app", "--time-scale", "1e308"], ["app", "--bootstrap-seconds", "1e11"],
      ["testnet", "up", "--timeout", "1e11"],
    ] {
      #expect(await FailClosedMain.run(arguments) == ExitCode.usage, "\(arguments)")
    }
  }

  /// `audit --report` to an unwritable place printed a raw NSError, hid the LEAK summary and
  /// exited 2. Now the verdict comes first, then the error, and a leak keeps exit 5.
  @Test(
    .needsFailclosedBinary)
  func anUnwritableReportKeepsTheVerdictAndItsExitCode() throws {
    let leaky = try Self.capture(leak: true)
    defer { try? FileManager.default.removeItem(atPath: leaky.directory) }
    // Under a regular file: no user, root included, can create that directory.
    let (status, output) = try Self.run(["audit", leaky.path, "--report", leaky.path + "/report"])
    #expect(status == 5)
    let verdict = try #require(output.range(of: "LEAK: "))
    let error = try #require(output.range(of: "failclosed audit: --report \(leaky.path)/report"))
    #expect(verdict.lowerBound < error.lowerBound, "\(output)")
    #expect(!output.contains("NSCocoaErrorDomain"), "\(output)")

    let clean = try Self.capture(leak: false)
    defer { try? FileManager.default.removeItem(atPath: clean.directory) }
    let passed = try Self.run([
      "audit", clean.path, "--allow", "10.99.1.10:9001", "--report", clean.path + "/report",
    ])
    #expect(passed.output.contains("PASS: "))
    #expect(passed.status == ExitCode.inconclusive, "a pass without its report is not a pass")
  }

  /// A full disk (a 64 KiB tmpfs): a clear error, nothing under the final name, no temporary
  /// file left; the previous complete file stays whole.
  @Test(.needsRoot(because: "mounts a tmpfs"))
  func aFullDiskLeavesNoHalfWrittenReport() async throws {
    let mountPoint = NSTemporaryDirectory() + "fc-full-\(getpid())-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: mountPoint) }
    try CommandRunner.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mountPoint])
    defer { _ = try? CommandRunner.run(["umount", mountPoint]) }
    let target = mountPoint + "/report.json"
    try AtomicFile.write("{\"complete\": true}\n", to: target)
    #expect {
      try AtomicFile.write([UInt8](repeating: 0x20, count: 256 * 1024), to: target)
    } throws: { error in
      "\(error)" == "cannot write \(target): ENOSPC (No space left on device)"
    }
    #expect(try String(contentsOfFile: target, encoding: .utf8) == "{\"complete\": true}\n")
    #expect(try FileManager.default.contentsOfDirectory(atPath: mountPoint) == ["report.json"])

    // The audit command on the full disk: verdict kept, no audit.json at all.
    // Fill what is left, to the last block.
    let filler = open(mountPoint + "/filler", O_WRONLY | O_CREAT, 0o600)
    let block = [UInt8](repeating: 0x20, count: 4096)
    for _ in 0..<64 where block.withUnsafeBytes({ write(filler, $0.baseAddress, $0.count) }) > 0 {}
    close(filler)
    let leaky = try Self.capture(leak: true)
    defer { try? FileManager.default.removeItem(atPath: leaky.directory) }
    let reports = mountPoint + "/reports"
    let code = await FailClosedMain.run(["audit", leaky.path, "--report", reports])
    #expect(code == 5)
    let left = (try? FileManager.default.contentsOfDirectory(atPath: reports)) ?? []
    #expect(left.isEmpty, "\(left)")
  }

  /// leak-audit on a full disk: the table first (the scenario is inconclusive, as its own work
  /// files cannot be written either: never a pass), then the error naming --report and ENOSPC,
  /// exit 2, and nothing half-written under a report's final name.
  @Test(
    .needsRoot(because: "mounts a tmpfs, runs a sandbox"),
    .needsFailclosedBinary)
  func leakAuditOnAFullDiskPrintsTheVerdictFirst() throws {
    let mountPoint = NSTemporaryDirectory() + "fc-full-la-\(getpid())-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: mountPoint) }
    try CommandRunner.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mountPoint])
    defer { _ = try? CommandRunner.run(["umount", mountPoint]) }
    let reports = mountPoint + "/reports"
    try FileManager.default.createDirectory(atPath: reports, withIntermediateDirectories: true)
    let filler = open(mountPoint + "/filler", O_WRONLY | O_CREAT, 0o600)
    let block = [UInt8](repeating: 0x20, count: 4096)
    for _ in 0..<64 where block.withUnsafeBytes({ write(filler, $0.baseAddress, $0.count) }) > 0 {}
    close(filler)
    let (status, output) = try Self.run([
      "leak-audit", "--lane", "mock", "--report", reports,
      repositoryRoot + "/Scenarios/healthy-baseline.json",
    ])
    let table = try #require(output.range(of: "healthy-baseline"), "\(output)")
    let error = try #require(
      output.range(of: "failclosed leak-audit: --report \(reports): cannot write"), "\(output)")
    #expect(table.lowerBound < error.lowerBound)
    #expect(output.contains("ENOSPC"), "\(output)")
    #expect(status == ExitCode.inconclusive, "\(output)")
    let left = (try? FileManager.default.contentsOfDirectory(atPath: reports)) ?? []
    #expect(left.isEmpty, "half-written or temporary files left: \(left)")
  }
}
