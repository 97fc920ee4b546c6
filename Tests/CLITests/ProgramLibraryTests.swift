import FailClosedSupport
import Foundation
import TestSupport
import Testing

/// The programs the library runs, present or not (a suite's trait cannot ask the suite).
enum ProgramLibraryTools {
  static let python = "/usr/bin/python3"

  static var missing: [String] {
    var missing = ["curl", "wget", "torsocks"].filter { tool in
      !["/usr/bin/", "/bin/"].contains { FileManager.default.isExecutableFile(atPath: $0 + tool) }
    }
    let probe = Process()
    probe.executableURL = URL(fileURLWithPath: python)
    probe.arguments = ["-c", "import requests, socks"]
    probe.standardError = FileHandle.nullDevice
    if (try? probe.run()) == nil {
      missing.append("python3")
    } else {
      probe.waitUntilExit()
      if probe.terminationStatus != 0 { missing.append("python3-requests/python3-socks") }
    }
    return missing
  }

}

/// Real programs from Debian under the censorship library (`leak-audit --app -- CMD`), each
/// held to what its own documentation promises. A configuration that resolves names itself
/// (curl's socks5://, --socks5 and ALL_PROXY=socks5://, requests' socks5://, wget, which has no
/// SOCKS support and ignores ALL_PROXY) is a canary: its DNS question must be caught. One that
/// lets Tor resolve (socks5h://, --socks5-hostname, torsocks) must pass every scenario run
/// here: it succeeds on a healthy Tor, and fails or waits, sending nothing in clear, when Tor is
/// blocked or has crashed. docs/programs.md has the whole library's table.
@Suite(
  .serialized,
  .needsRoot,
  .needs(
    "needs the failclosed binary and curl, wget, torsocks, python3-requests, python3-socks",
    if: FailclosedBinary.built != nil && ProgramLibraryTools.missing.isEmpty))
struct ProgramLibraryTests {
  struct Configuration: Sendable, CustomStringConvertible {
    let name: String
    let command: [String]
    var environment: [String: String] = [:]
    /// True: must pass every scenario; false: a canary whose leak must be caught.
    let clean: Bool
    var description: String { name }
  }

  static let url = "http://web.example/"
  static let socks = "127.0.0.1:39050"
  static let python = "/usr/bin/python3"

  static func requests(_ scheme: String) -> [String] {
    [
      python, "-c",
      "import requests; requests.get('\(url)', proxies={'http': '\(scheme)://\(socks)'}, "
        + "timeout=120).raise_for_status()",
    ]
  }

  static let configurations: [Configuration] = [
    Configuration(
      name: "curl --socks5-hostname",
      command: ["curl", "-sS", "-o", "/dev/null", "--socks5-hostname", socks, url], clean: true),
    Configuration(
      name: "curl -x socks5h://",
      command: ["curl", "-sS", "-o", "/dev/null", "-x", "socks5h://\(socks)", url],
      clean: true),
    Configuration(
      name: "torsocks curl", command: ["torsocks", "curl", "-sS", "-o", "/dev/null", url],
      environment: ["TORSOCKS_TOR_PORT": "39050", "TORSOCKS_TOR_ADDRESS": "127.0.0.1"],
      clean: true),
    Configuration(name: "python requests socks5h://", command: requests("socks5h"), clean: true),
    Configuration(
      name: "curl --socks5", command: ["curl", "-sS", "-o", "/dev/null", "--socks5", socks, url],
      clean: false),
    Configuration(
      name: "curl ALL_PROXY=socks5://", command: ["curl", "-sS", "-o", "/dev/null", url],
      environment: ["ALL_PROXY": "socks5://\(socks)"], clean: false),
    Configuration(
      name: "wget ALL_PROXY=socks5h://", command: ["wget", "-q", "-O", "/dev/null", url],
      environment: ["ALL_PROXY": "socks5h://\(socks)"], clean: false),
    Configuration(name: "python requests socks5://", command: requests("socks5"), clean: false),
  ]

  /// What CI runs of Scenarios/program: the control and two ways Tor fails (the whole
  /// library's table is in docs/programs.md).
  static let cleanScenarios = ["program-healthy", "program-tor-blocked", "program-tor-crash"]

  /// Runs `configuration` on `scenarios`; each scenario's verdict and first reason.
  static func audit(
    _ configuration: Configuration, _ scenarios: [String], profile: String? = nil
  ) throws -> (
    status: Int32, verdicts: [String: (verdict: String, reason: String)], output: String
  ) {
    let directory = NSTemporaryDirectory() + "fc-programs-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var arguments = ["leak-audit"]
    arguments += scenarios.map { RepositoryFiles.path("Scenarios/program/\($0).json") }
    arguments += ["--report", directory + "/report", "--app"]
    if let profile {
      try profile.write(toFile: directory + "/profile.json", atomically: true, encoding: .utf8)
      arguments += ["--app-profile", directory + "/profile.json"]
    } else if !configuration.environment.isEmpty {
      let profile = directory + "/profile.json"
      let env = configuration.environment.sorted { $0.key < $1.key }
        .map { "\"\($0.key)\": \"\($0.value)\"" }.joined(separator: ", ")
      try "{\"env\": {\(env)}}".write(toFile: profile, atomically: true, encoding: .utf8)
      arguments += ["--app-profile", profile]
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try #require(FailclosedBinary.built))
    process.arguments = arguments + ["--"] + configuration.command
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let output = String(
      decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    var verdicts: [String: (String, String)] = [:]
    if let data = FileManager.default.contents(atPath: directory + "/report/report.json"),
      let report = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
      let results = report["scenarios"] as? [[String: Any]]
    {
      for result in results {
        guard let name = result["name"] as? String, let verdict = result["verdict"] as? String
        else { continue }
        verdicts[name] = (verdict, (result["reasons"] as? [String])?.first ?? "")
      }
    }
    return (process.terminationStatus, verdicts, output)
  }

  @Test(arguments: configurations.filter(\.clean))
  func aConfigurationThatLetsTorResolvePassesEveryScenario(_ configuration: Configuration) throws {
    let result = try Self.audit(configuration, Self.cleanScenarios)
    #expect(result.status == 0, "\(configuration): \(result.output.suffix(1500))")
    for scenario in Self.cleanScenarios {
      let got = result.verdicts[scenario]
      #expect(got?.verdict == "pass", "\(configuration) \(scenario): \(got?.reason ?? "not run")")
    }
  }

  @Test(arguments: configurations.filter { !$0.clean })
  func aConfigurationThatResolvesItselfIsCaught(_ configuration: Configuration) throws {
    let result = try Self.audit(configuration, ["program-healthy"])
    #expect(result.status == 5, "\(configuration): \(result.output.suffix(1500))")
    let got = result.verdicts["program-healthy"]
    #expect(got?.verdict == "leak", "\(configuration): \(got?.reason ?? "not run")")
    #expect(
      got?.reason.contains("dns to 10.66.1.53:53 (web.example)") == true, "\(got?.reason ?? "")")
  }

  /// Debian's tor as the program's Tor (`"tor": "debian"`): the real-Tor lane's program files,
  /// on the private network. curl that lets Tor resolve succeeds through the exit, and waits or
  /// fails with every relay port dropped; curl --socks5 is caught by its DNS question.
  @Test func debiansTorOnThePrivateNetworkCarriesTheProgramOrHoldsIt() throws {
    let scenarios = ["program-real-healthy", "program-real-relays-dropped"]
    let clean = try Self.audit(
      Configuration(
        name: "curl --socks5-hostname, debian",
        command: ["curl", "-sS", "-o", "/dev/null", "--socks5-hostname", Self.socks, Self.url],
        environment: [:], clean: true), scenarios, profile: #"{"tor": "debian"}"#)
    #expect(clean.status == 0, "\(clean.output.suffix(2000))")
    for scenario in scenarios {
      #expect(
        clean.verdicts[scenario]?.verdict == "pass",
        "\(scenario): \(clean.verdicts[scenario]?.reason ?? "not run")")
    }
    let leaky = try Self.audit(
      Configuration(
        name: "curl --socks5, debian",
        command: ["curl", "-sS", "-o", "/dev/null", "--socks5", Self.socks, Self.url],
        clean: false), ["program-real-healthy"], profile: #"{"tor": "debian"}"#)
    #expect(
      leaky.verdicts["program-real-healthy"]?.verdict == "leak", "\(leaky.output.suffix(2000))")
  }

  /// Bad input: a command that does not exist is a usage error before anything is set up; one
  /// that exits at once is judged (it did not succeed on a healthy Tor); one that never ends is
  /// stopped at the scenario's end, and the sandbox goes with it.
  @Test func aMissingAQuickAndANeverEndingCommandEachGetAClearVerdict() throws {
    let missing = try Self.audit(
      Configuration(name: "missing", command: ["no-such-program-here"], clean: false),
      ["program-healthy"])
    #expect(missing.status == 2)
    #expect(missing.output.contains("no-such-program-here: no such program"), "\(missing.output)")
    #expect(missing.verdicts.isEmpty)
    let quick = try Self.audit(
      Configuration(name: "false", command: ["false"], clean: false), ["program-healthy"])
    #expect(quick.verdicts["program-healthy"]?.verdict == "failed", "\(quick.output)")
    #expect(
      quick.verdicts["program-healthy"]?.reason.contains("it exited with status 1") == true,
      "\(quick.verdicts["program-healthy"]?.reason ?? "")")
    let forever = try Self.audit(
      Configuration(name: "sleep", command: ["sleep", "1717"], clean: false),
      ["program-tor-blocked"])
    #expect(forever.verdicts["program-tor-blocked"]?.verdict == "pass", "\(forever.output)")
    #expect(
      forever.verdicts["program-tor-blocked"]?.reason
        == "every expectation met and no leak in the capture")
    // Nothing of it is left running.
    let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    let left = processes.filter { pid in
      guard Int(pid) != nil,
        let line = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline")
      else { return false }
      return String(decoding: line, as: UTF8.self) == "sleep\u{0}1717\u{0}"
    }
    #expect(left.isEmpty, "still running: \(left)")
  }
}
