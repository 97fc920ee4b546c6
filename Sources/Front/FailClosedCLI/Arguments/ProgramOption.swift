import Foundation
import Lanes
import Scenarios

/// `--app -- CMD ARGS` and `--app-profile FILE` (the program system's options, declared in
/// ``ProgramSystem``): the program they ask for, checked before anything is set up (a command
/// that does not exist is a usage error, exit 2). Which system they select is
/// ``SystemUnderTestOption``'s rule, as for every system's options.
enum ProgramOption {
  /// The program asked for, or nil when neither option is given.
  static func spec(_ arguments: ParsedArguments) throws -> ProgramSpec? {
    let profile = arguments.value(ProgramSystem.profile.name)
    guard arguments.has(ProgramSystem.command.name) || profile != nil else {
      if !arguments.trailing.isEmpty {
        throw UsageError("a command after -- needs --app (leak-audit --app -- CMD ARGS)")
      }
      return nil
    }
    let command = arguments.trailing.isEmpty ? nil : arguments.trailing
    var spec: ProgramSpec
    if let profile {
      guard let data = FileManager.default.contents(atPath: profile) else {
        throw UsageError("--app-profile \(profile): cannot read the file")
      }
      do {
        spec = try ProgramSpecParser.parse(
          String(decoding: data, as: UTF8.self), file: profile, command: command)
      } catch {
        throw UsageError("--app-profile \(error)")
      }
    } else {
      guard let command else {
        throw UsageError("--app needs a command after --: leak-audit --app -- CMD ARGS")
      }
      spec = ProgramSpec(arguments: command)
    }
    guard let program = spec.arguments.first, let found = locate(program, in: spec) else {
      throw UsageError(
        "\(spec.arguments.first ?? ""): no such program (not executable, or not on PATH)")
    }
    spec.arguments[0] = found
    return spec
  }

  /// The program's path: as given when it names one, else the first executable on PATH
  /// (the program's own PATH when its environment sets one).
  static func locate(_ program: String, in spec: ProgramSpec) -> String? {
    if program.contains("/") {
      let path =
        program.hasPrefix("/")
        ? program
        : (spec.workingDirectory ?? FileManager.default.currentDirectoryPath) + "/" + program
      return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }
    let search =
      spec.environment["PATH"] ?? ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for directory in search.split(separator: ":") {
      let candidate = "\(directory)/\(program)"
      if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
  }
}
