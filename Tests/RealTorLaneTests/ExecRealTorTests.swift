import FailClosedSupport
import Foundation
import TestSupport
import Testing

@testable import Lanes

/// `failclosed exec --tor real`, run as a user runs it (the built binary): Debian's tor in the
/// device on a private network of its own. In RealLaneLibraryTests' suite, so its network
/// never runs beside the lane's (the suite is serialized).
extension RealLaneLibraryTests {
  struct ExecReport: Decodable {
    struct Audit: Decodable {
      let verdict: String
      let leaks: [Leak]
    }
    struct Leak: Decodable {
      let destination: String
    }
    let report: Audit
    let commandStatus: Int32?
    let killedAtTimeout: Bool
  }

  /// A fetch of a name through the device's tor is resolved at the exit and reaches the
  /// world's web host (the positive control); the same program's direct request is a leak
  /// (the canary); nothing else leaves: the relays of the network's consensus are allowed.
  @Test(
    .needs(
      "needs the failclosed binary (swift build) and Debian's tor",
      if: FailclosedBinary.built != nil
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/tor")))
  func execWithRealTorCarriesTheFetchAndCatchesTheDirectRequest() throws {
    try #require(
      FailclosedBinary.built != nil, "the failclosed binary")
    try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/tor"), "Debian's tor")
    let directory =
      NSTemporaryDirectory() + "fc-exec-real-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let marker = directory + "/through-tor"
    let program = """
      curl -s -m 20 -o /dev/null -w '%{http_code}' --socks5-hostname 127.0.0.1:39050 \
      http://example.org/ > \(marker); curl -s -m 3 -o /dev/null http://10.66.1.80:8080/; true
      """
    let process = Process()
    process.executableURL = URL(fileURLWithPath: FailclosedBinary.path)
    process.arguments = [
      "exec", "--tor", "real", "--grace", "0.5", "--report", directory, "--", "sh", "-c", program,
    ]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 5, "\(printed)")
    let result = try JSONDecoder().decode(
      ExecReport.self, from: Data(contentsOf: URL(fileURLWithPath: directory + "/report.json")))
    #expect(try String(contentsOfFile: marker, encoding: .utf8) == "200")
    #expect(result.report.leaks.map(\.destination) == ["10.66.1.80:8080"])
    // The device's tor is the run's, not the command's: the command's end ends the wait.
    #expect(result.killedAtTimeout == false)
    #expect(result.commandStatus == 0)
    #expect(printed.contains("tor: network ready in"))
    // tor's own log shows it bootstrapped on the private network.
    let log = try String(contentsOfFile: directory + "/tor/client/notice.log", encoding: .utf8)
    #expect(log.contains("Bootstrapped 100%"))
  }
}
