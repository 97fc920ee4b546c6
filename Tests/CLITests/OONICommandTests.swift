import FailClosedCLI
import FailClosedSupport
import Foundation
import TestSupport
import Testing

/// `failclosed ooni convert`: a censorship case converts (exit 0, -o writes the file), a
/// measurement that is not censorship is refused (exit 2) unless --force, and bad input is a
/// usage error.
@Suite struct OONICommandTests {
  static let corpus =
    ProcessInfo.processInfo.environment["FC_OONI_CORPUS"]
    ?? repositoryRoot + "/Tests/OONITests/corpus"
  static let missing: String? =
    FileManager.default.fileExists(atPath: corpus) ? nil : "no OONI corpus at \(corpus)"

  @Test(
    .needs("needs the OONI corpus", if: missing == nil))
  func convertWritesTheScenarioAndRefusesWhatIsNotCensorship() async throws {
    let directory = NSTemporaryDirectory() + "fc-ooni-\(getpid())"
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let out = directory + "/ru.json"
    #expect(
      await FailClosedMain.run([
        "ooni", "convert", Self.corpus + "/RU_tor_2023-01-21_AS197467_blocked.json", "-o", out,
      ]) == 0)
    let text = try String(contentsOfFile: out, encoding: .utf8)
    #expect(
      text.contains(
        #""measured": "RU 2023-01-21 AS197467, 9/10 or_port_dirauth generic_timeout_error""#))
    let bug = Self.corpus + "/MY_vanilla_tor_2019-04-08_AS4788_legacy_probe-bug.json"
    #expect(await FailClosedMain.run(["ooni", "convert", bug, "-o", directory + "/my.json"]) == 2)
    #expect(!FileManager.default.fileExists(atPath: directory + "/my.json"))
    #expect(
      await FailClosedMain.run(["ooni", "convert", bug, "-o", directory + "/my.json", "--force"])
        == 0)
    let forced = try String(contentsOfFile: directory + "/my.json", encoding: .utf8)
    #expect(forced.contains("\"notCensorship\"") && forced.contains("a probe bug"))
  }

  @Test func badInputIsAUsageError() async throws {
    #expect(await FailClosedMain.run(["ooni"]) == 2)
    #expect(await FailClosedMain.run(["ooni", "convert"]) == 2)
    #expect(await FailClosedMain.run(["ooni", "convert", "/nonexistent.json"]) == 2)
    let bad = NSTemporaryDirectory() + "fc-ooni-bad-\(getpid()).json"
    defer { try? FileManager.default.removeItem(atPath: bad) }
    try "{\"test_name\": \"tor\",\n oops}".write(toFile: bad, atomically: true, encoding: .utf8)
    #expect(await FailClosedMain.run(["ooni", "convert", bad]) == 2)
    #expect(
      await FailClosedMain.run(["ooni", "convert", bad, "--profile", "naive-port"]) == 2)
  }
}
