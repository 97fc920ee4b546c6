import Lanes
import Scenarios

/// `--sut NAME` and the systems' own options (`--bitchat-src DIR`, `--app` ...) as leak-audit
/// and replay read them: each system and each of its options looked up in Lanes' registry
/// (``TestedSystems``), never named here, so their option tables, `--help`, completion and
/// the check below follow the registry. One rule for every system's option
/// (``TestedSystemOption/rule``): alone it implies the system that declares it; beside a
/// `--sut` without that system it is a usage error naming both.
enum SystemUnderTestOption {
  /// The option's usage text: "model|bitchat-source".
  static func choices(in systems: [TestedSystem] = TestedSystems.all) -> String {
    TestedSystems.names(in: systems).joined(separator: "|")
  }

  /// `--sut`, as each command's table lists it.
  static func spec(in systems: [TestedSystem] = TestedSystems.all) -> OptionSpec {
    OptionSpec(
      "sut", .single, valueName: choices(in: systems),
      help: "the system under test (default \(TestedSystems.defaultName))",
      values: .words(TestedSystems.names(in: systems)))
  }

  /// `--sut` and then every system's own options, in the registry's order.
  static func specs(in systems: [TestedSystem] = TestedSystems.all) -> [OptionSpec] {
    [spec(in: systems)] + TestedSystems.options(in: systems).map { spec(for: $0.option) }
  }

  /// A system's option as the parser and completion take it.
  static func spec(for option: TestedSystemOption) -> OptionSpec {
    let values: OptionSpec.Values
    switch option.value {
    case .flag: return OptionSpec(option.name, .flag, help: option.help)
    case .directory: values = .directory
    case .file: values = .file
    case .text: values = .text
    }
    return OptionSpec(
      option.name, .single, valueName: option.valueName, help: option.help, values: values)
  }

  /// The systems' options for a usage line, continued at `indent`: "[--bitchat-src DIR] ...".
  static func usage(in systems: [TestedSystem] = TestedSystems.all, indent: String) -> String {
    String(
      HelpTextWrap.lines(
        words: TestedSystems.options(in: systems).map { "[\($0.option.usage)]" }, first: indent,
        indent: indent
      ).joined(separator: "\n").dropFirst(indent.count))
  }

  /// What `--help` says of the systems: each one's name, summary and options, the one rule
  /// for the options, and with `guides` each system's paragraph.
  static func help(in systems: [TestedSystem] = TestedSystems.all, guides: Bool) -> String {
    let column = String(repeating: " ", count: (systems.map(\.name.count).max() ?? 0) + 4)
    var lines = ["Systems under test (--sut NAME), each with its own options:"]
    for system in systems {
      let name = "  " + system.name
      lines += HelpTextWrap.lines(
        system.summary, first: name + column.dropFirst(name.count), indent: column)
      if !system.options.isEmpty {
        let usages = system.options.map(\.usage)
        lines += HelpTextWrap.lines(
          words: ["options:"] + usages.dropLast().map { $0 + "," } + usages.suffix(1),
          first: column, indent: column)
      }
    }
    lines += HelpTextWrap.lines(TestedSystemOption.rule)
    if guides {
      for guide in systems.map(\.guide) where !guide.isEmpty {
        lines += ["", guide.hasSuffix("\n") ? String(guide.dropLast()) : guide]
      }
    }
    return lines.joined(separator: "\n")
  }

  /// Each system option given, with the system it belongs to, in the registry's order.
  static func given(_ arguments: ParsedArguments, in systems: [TestedSystem]) -> [(
    option: TestedSystemOption, system: TestedSystem
  )] {
    TestedSystems.options(in: systems).filter { isGiven($0.option, arguments) }
  }

  static func isGiven(_ option: TestedSystemOption, _ arguments: ParsedArguments) -> Bool {
    option.value == .flag ? arguments.has(option.name) : arguments.value(option.name) != nil
  }

  /// "--bitchat-src /x", "--app": an option as it was given.
  static func spelled(_ option: TestedSystemOption, _ arguments: ParsedArguments) -> String {
    "--\(option.name)" + (arguments.value(option.name).map { " \($0)" } ?? "")
  }

  /// The rule's second half: every system option given belongs to one of `chosen`, the
  /// systems that `chosenBy` ("--sut model", "--compare bitchat,hardened") named.
  static func check(
    _ arguments: ParsedArguments, chosen: [TestedSystem], chosenBy: String,
    in systems: [TestedSystem] = TestedSystems.all
  ) throws {
    for (option, system) in given(arguments, in: systems)
    where !chosen.contains(where: { $0.name == system.name }) {
      throw UsageError(
        "\(spelled(option, arguments)) is an option of \(system.name); it contradicts "
          + "\(chosenBy) (name \(system.name) there, or leave the option out)")
    }
  }

  /// The system `--sut` names; without --sut the one a system option given implies (the
  /// default when none is given).
  static func system(
    _ arguments: ParsedArguments, in systems: [TestedSystem] = TestedSystems.all
  ) throws -> TestedSystem {
    guard let name = arguments.value("sut") else {
      return try implied(arguments, several: false, in: systems)[0]
    }
    guard let system = TestedSystems.named(name, in: systems) else {
      throw UsageError(
        "--sut: expected " + TestedSystems.names(in: systems).joined(separator: " or ")
          + ", got '\(name)'")
    }
    try check(arguments, chosen: [system], chosenBy: "--sut \(name)", in: systems)
    return system
  }

  /// leak-audit's `--sut A,B`: each named system, in order, once; the options as for one.
  static func systems(
    _ arguments: ParsedArguments, in systems: [TestedSystem] = TestedSystems.all
  ) throws -> [TestedSystem] {
    guard let list = arguments.value("sut") else {
      return try implied(arguments, several: true, in: systems)
    }
    guard list.contains(",") else { return [try system(arguments, in: systems)] }
    var chosen: [TestedSystem] = []
    for name in list.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
      guard let system = TestedSystems.named(name, in: systems) else {
        throw UsageError(
          "--sut: expected names among " + TestedSystems.names(in: systems).joined(separator: ", ")
            + " separated by commas, got '\(name)'")
      }
      guard !chosen.contains(where: { $0.name == name }) else {
        throw UsageError("--sut: '\(name)' is named twice")
      }
      chosen.append(system)
    }
    try check(arguments, chosen: chosen, chosenBy: "--sut \(list)", in: systems)
    return chosen
  }

  /// Without --sut: the system the options given imply, or the default. Options of two
  /// systems imply neither: which runs, and whose reports go to DIR, is --sut's to say.
  static func implied(
    _ arguments: ParsedArguments, several: Bool, in systems: [TestedSystem]
  ) throws -> [TestedSystem] {
    let given = given(arguments, in: systems)
    var implied: [TestedSystem] = []
    for (_, system) in given where !implied.contains(where: { $0.name == system.name }) {
      implied.append(system)
    }
    guard implied.count <= 1 else {
      let names = implied.map(\.name)
      throw UsageError(
        given.map { "\(spelled($0.option, arguments)) implies --sut \($0.system.name)" }
          .joined(separator: ", ")
          + (several
            ? ": name them with --sut \(names.joined(separator: ","))"
            : ": name the one to run with --sut"))
    }
    if let system = implied.first { return [system] }
    guard let system = TestedSystems.named(TestedSystems.defaultName, in: systems) else {
      throw UsageError("--sut: no default system \(TestedSystems.defaultName) in the list")
    }
    return [system]
  }

  /// The inputs a system gets ready with: every system option given, by name.
  static func inputs(
    _ arguments: ParsedArguments, program: ProgramSpec? = nil,
    in systems: [TestedSystem] = TestedSystems.all
  ) -> TestedSystemInputs {
    var values: [String: String] = [:]
    for (option, _) in given(arguments, in: systems) {
      values[option.name] = arguments.value(option.name) ?? ""
    }
    return TestedSystemInputs(
      optionValues: values, program: program, progress: { FailClosedMain.printError($0) })
  }
}
