import FailClosedSupport
import Foundation
import OONI
import Scenarios

/// `failclosed ooni convert FILE`: an OONI measurement of Tor as a real-tor scenario file.
public struct OONICommand: Command {
  public init() {}
  public let name = "ooni"
  public let summary = "convert OONI measurements of Tor into real-tor scenarios"
  public let usage = """
    Usage: failclosed ooni convert FILE.json [-o Scenarios/ooni/NAME.json] [--force]
                                              [--profile bitchat|hardened|onion-browser]

    Reads an OONI measurement (tor 0.0.1 list and map, 0.1.0, 0.3.0, 0.4.0; vanilla_tor legacy
    and 0.2.0+; torsf 0.1.0+; one JSON document, or JSONL with one measurement per line) and
    writes a real-tor scenario: tor's target classes (directory authorities' ORPorts and
    DirPorts, relays, obfs4 bridges; snowflake approximated by the obfs4 bridge) map to the
    private network's nodes keeping the measured share of reachable targets, each failure to the
    censor action that causes it, and vanilla_tor/torsf's bootstrap stop to the censorship that
    makes tor stop there. Every rule says where it came from ("measured").
    Measurements that are not censorship (OONI marks them inaccurate, or a client bug shows)
    are refused with the reason, exit 2; --force converts them with the reason in the file.
    Without -o the scenario is printed. With JSONL, -o names a directory.
    `failclosed replay --from-ooni FILE.json` converts in memory and runs it.
    """
  public let options: [OptionSpec] = [
    OptionSpec("o", .single, valueName: "FILE", help: "write the scenario here", values: .file),
    OptionSpec("force", .flag, help: "convert a measurement that is not censorship"),
    OptionSpec(
      "profile", .single, valueName: "P",
      help: "the app: bitchat (default), hardened (default for torsf), onion-browser"),
  ]

  public func run(_ arguments: ParsedArguments) async throws -> Int32 {
    guard arguments.positional.first == "convert" else {
      throw UsageError("expected 'convert FILE.json'")
    }
    guard arguments.positional.count == 2 else {
      throw UsageError("expected exactly one measurement file after 'convert'")
    }
    let file = arguments.positional[1]
    let options = OONIConversion.Options(
      profile: try Self.profile(arguments), force: arguments.has("force"))
    let measurements: [OONIMeasurement]
    do {
      measurements = try Self.read(file)
    } catch {
      FailClosedMain.printError("failclosed ooni: \(error)")
      return ExitCode.usage
    }
    let output = arguments.value("o")
    var status = ExitCode.pass
    for measurement in measurements {
      let location = measurements.count > 1 ? "\(file):\(measurement.line)" : file
      do {
        let document = try OONIConversion.convert(measurement, options: options)
        let text = OONIConversion.text(document)
        var target = output
        if let output, measurements.count > 1 {
          target = output + "/" + OONIConversion.scenarioName(measurement) + ".json"
        }
        // The scenario must load as any scenario file does.
        let name = target.map(Self.stem) ?? OONIConversion.scenarioName(measurement)
        if case .failure(let error) = Result(catching: {
          try ScenarioParser.parse(text, file: target ?? location, name: name)
        }) {
          FailClosedMain.printError(
            "failclosed ooni: \(location): the converted scenario: \(error)")
          status = ExitCode.usage
          continue
        }
        if let target {
          let directory = (target as NSString).deletingLastPathComponent
          if !directory.isEmpty {
            try FileManager.default.createDirectory(
              atPath: directory, withIntermediateDirectories: true)
          }
          try text.write(toFile: target, atomically: true, encoding: .utf8)
          print("\(location) -> \(target)")
        } else {
          print(text, terminator: "")
        }
      } catch {
        FailClosedMain.printError("failclosed ooni: \(location): \(error)")
        status = ExitCode.usage
      }
    }
    return status
  }

  static func stem(_ path: String) -> String {
    ((path as NSString).lastPathComponent as NSString).deletingPathExtension
  }

  static func profile(_ arguments: ParsedArguments) throws -> AppPlan.Profile? {
    guard let text = arguments.value("profile") else { return nil }
    let allowed: [AppPlan.Profile] = [.bitchat, .hardened, .onionBrowser]
    guard let profile = AppPlan.Profile(rawValue: text), allowed.contains(profile) else {
      throw UsageError(
        "--profile: expected " + allowed.map(\.rawValue).joined(separator: ", ")
          + ", got '\(text)'")
    }
    return profile
  }

  static func read(_ file: String) throws -> [OONIMeasurement] {
    guard let data = FileManager.default.contents(atPath: file) else {
      throw OONIError(file: file, line: 0, field: "", message: "cannot read the file")
    }
    return try OONIParser.parse(Array(data), file: file)
  }

  /// One measurement of `file` as a scenario, in memory (for `replay --from-ooni`).
  static func scenario(_ file: String, options: OONIConversion.Options) throws
    -> Scenarios
    .Scenario
  {
    let measurements = try read(file)
    guard measurements.count == 1 else {
      throw UsageError(
        "--from-ooni: \(file) holds \(measurements.count) measurements; replay takes one "
          + "(convert them with 'failclosed ooni convert FILE -o DIR')")
    }
    let document = try OONIConversion.convert(measurements[0], options: options)
    return try ScenarioParser.parse(
      OONIConversion.text(document), file: file,
      name: OONIConversion.scenarioName(measurements[0]))
  }
}
