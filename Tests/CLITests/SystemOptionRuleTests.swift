import FailClosedCLI
import Lanes
import Testing

@testable import FailClosedCLI

/// The one rule for a system's own options (``TestedSystemOption/rule``), held for every
/// option of every registered system: alone it implies its system, beside a --sut without it
/// it is a usage error naming both, two systems' options imply neither; and each is in the
/// option tables, `--help` and completion of both commands that take --sut. The tests iterate
/// the registry (``TestedSystems/options(in:)``), so a new system's options are held to it
/// with no edit here.
@Suite struct SystemOptionRuleTests {
  /// The commands that take --sut and the systems' options.
  static let commands: [any Command] = [LeakAuditCommand(), ReplayCommand()]

  static func parse(_ words: [String], _ command: any Command) throws -> ParsedArguments {
    try ArgumentParser.parse(words, options: command.options)
  }

  /// The option as given: `--app`, or `--bitchat-src /x`.
  static func given(_ option: TestedSystemOption, _ value: String = "/x") -> [String] {
    option.value == .flag ? ["--\(option.name)"] : ["--\(option.name)", value]
  }

  @Test func theRegistryDeclaresOptions() {
    // Not vacuous: the registry's systems declare options, more than one system of them.
    #expect(Set(TestedSystems.options().map(\.system.name)).count >= 2)
  }

  @Test func aloneEachOptionImpliesItsSystem() throws {
    for (option, system) in TestedSystems.options() {
      for command in Self.commands {
        let arguments = try Self.parse(Self.given(option), command)
        #expect(
          try SystemUnderTestOption.system(arguments).name == system.name,
          "\(command.name) --\(option.name)")
        #expect(
          try SystemUnderTestOption.systems(arguments).map(\.name) == [system.name],
          "\(command.name) --\(option.name)")
      }
    }
  }

  @Test func besideASutWithoutItsSystemEachOptionIsAnErrorNamingBoth() throws {
    for (option, system) in TestedSystems.options() {
      for other in TestedSystems.all where other.name != system.name {
        let arguments = try Self.parse(
          Self.given(option) + ["--sut", other.name], LeakAuditCommand())
        func namesBoth(_ error: any Error) -> Bool {
          let text = "\(error)"
          return text.contains("--\(option.name)") && text.contains("of \(system.name)")
            && text.contains("contradicts --sut \(other.name)")
        }
        #expect {
          _ = try SystemUnderTestOption.system(arguments)
        } throws: { namesBoth($0) }
        #expect {
          _ = try SystemUnderTestOption.systems(arguments)
        } throws: { namesBoth($0) }
        // Named beside it (leak-audit's list), the system runs with its option.
        let both = try Self.parse(
          Self.given(option) + ["--sut", "\(other.name),\(system.name)"], LeakAuditCommand())
        #expect(
          try SystemUnderTestOption.systems(both).map(\.name) == [other.name, system.name])
      }
      let own = try Self.parse(Self.given(option) + ["--sut", system.name], ReplayCommand())
      #expect(try SystemUnderTestOption.system(own).name == system.name)
    }
  }

  @Test func optionsOfTwoSystemsImplyNeither() throws {
    let options = TestedSystems.options()
    for first in options {
      for second in options where first.system.name != second.system.name {
        let arguments = try Self.parse(
          Self.given(first.option) + Self.given(second.option, "/y"), LeakAuditCommand())
        #expect {
          _ = try SystemUnderTestOption.systems(arguments)
        } throws: { error in
          let text = "\(error)"
          return text.contains("--\(first.option.name)") && text.contains(first.system.name)
            && text.contains("--\(second.option.name)") && text.contains(second.system.name)
            && text.contains("--sut")
        }
        #expect(throws: UsageError.self) { try SystemUnderTestOption.system(arguments) }
      }
    }
  }

  /// What a system's prepare reads is the value given on the command line, by its option.
  @Test func eachOptionGivenReachesItsSystemsInputs() throws {
    for (option, _) in TestedSystems.options() {
      let arguments = try Self.parse(Self.given(option, "/given"), LeakAuditCommand())
      let inputs = SystemUnderTestOption.inputs(arguments)
      #expect(inputs.value(of: option) == (option.value == .flag ? "" : "/given"))
      #expect(inputs.optionValues.count == 1)
    }
  }

  @Test func eachOptionIsInTheTablesHelpAndCompletionOfBothCommands() throws {
    let bash = ShellCompletion.bash(Self.commands)
    let zsh = ShellCompletion.zsh(Self.commands)
    for command in Self.commands {
      let help = command.helpText
      #expect(
        help.contains(
          TestedSystemOption.rule.split(separator: " ").prefix(8).joined(
            separator: " ")), "\(command.name)")
      for (option, system) in TestedSystems.options() {
        let spec = try #require(
          command.options.first { $0.name == option.name }, "\(command.name) --\(option.name)")
        #expect(spec.help == option.help && (spec.kind == .flag) == (option.value == .flag))
        #expect(help.contains("  \(option.usage) "), "\(command.name) --help: --\(option.name)")
        #expect(help.contains("  \(system.name) "), "\(command.name) --help: \(system.name)")
        #expect(zsh.contains("'--\(option.name)["), "zsh: --\(option.name)")
      }
    }
    // bash: each command's branch lists the option, and a directory completes directories.
    let lines = bash.split(separator: "\n").map(String.init)
    for command in Self.commands {
      let branch = try #require(lines.firstIndex(of: "    \(command.name))"))
      let listed = lines[branch + 1].split(separator: "\"")[1].split(separator: " ")
      for (option, _) in TestedSystems.options() {
        #expect(listed.contains("--\(option.name)"[...]), "bash \(command.name): --\(option.name)")
      }
    }
    for (option, _) in TestedSystems.options() where option.value == .directory {
      #expect(bash.contains("--\(option.name)) COMPREPLY=( $(compgen -d"), "--\(option.name)")
    }
  }

  /// The rule is the README's too, and every system's option is named there.
  @Test func theReadmeStatesTheRuleAndNamesEachOption() throws {
    // Read as a paragraph: the README wraps its lines.
    let readme = try RepositoryFiles.text("README.md").replacingOccurrences(of: "\n", with: " ")
    #expect(readme.contains(TestedSystemOption.rule))
    for (option, _) in TestedSystems.options() {
      #expect(readme.contains("--\(option.name)"), "README: --\(option.name)")
    }
  }

  /// No option of a system shadows another system's or a command's own (the parser keeps the
  /// first of two specs of one name, silently).
  @Test func optionNamesAreOneEach() {
    for command in Self.commands {
      let names = command.options.map(\.name)
      #expect(Set(names).count == names.count, "\(command.name): \(names)")
    }
  }
}
