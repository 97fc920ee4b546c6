import FailClosedCLI
import Foundation
import Lanes
import Scenarios
import Testing

@testable import FailClosedCLI

/// A system added to the list with one option of its own (`--fake-src DIR`) is in leak-audit's
/// and replay's option tables, their `--help`, the bash and zsh completion and the option
/// check, and its value reaches the system's prepare, with no edit to the commands: the
/// commands are built on the list plus the fake (the registry is a constant; a test hands
/// the commands a longer list rather than changing the one every other test reads).
@Suite struct AddedSystemOptionTests {
  static let source = TestedSystemOption(
    "fake-src", valueName: "DIR", help: "a test's checkout for fake-source", value: .directory)

  /// Runs nothing; says which checkout it was given, so the test sees the value arrive.
  static let fake = TestedSystem(
    name: "fake-source", summary: "a test's trivial system with an option of its own",
    options: [source], adopt: { $0 },
    prepare: { _, inputs in
      TestedSystemSetup(
        scenarios: [],
        unavailable: ("checkout \(inputs.value(of: source) ?? "none")", endsRun: false))
    })

  static let systems = TestedSystems.all + [fake]
  static let commands: [any Command] = [
    LeakAuditCommand(systems: systems), ReplayCommand(systems: systems),
  ]

  @Test func itsOptionIsInTheTablesAndHelpOfBothCommands() throws {
    for command in Self.commands {
      let spec = try #require(command.options.first { $0.name == "fake-src" }, "\(command.name)")
      #expect(spec.kind == .single && spec.values == .directory && spec.valueName == "DIR")
      let help = command.helpText
      #expect(help.contains("[--fake-src DIR]"), "\(command.name) usage")
      #expect(help.contains("  --fake-src DIR "), "\(command.name) option table")
      #expect(help.contains("  fake-source "), "\(command.name) systems")
      #expect(help.contains("options: --fake-src DIR"), "\(command.name) systems")
      #expect(help.contains("|fake-source"), "\(command.name) --sut")
    }
    // The registry's own commands are untouched by it.
    #expect(!LeakAuditCommand().helpText.contains("fake-src"))
  }

  @Test func bashCompletesItAndItsDirectoryAndZshDeclaresIt() throws {
    let directory = try RepositoryFiles.temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try FileManager.default.createDirectory(
      atPath: directory + "/fake-checkout", withIntermediateDirectories: true)
    for command in Self.commands {
      #expect(
        try CompletionTests.bashComplete(
          ["failclosed", command.name, "--fake"], in: directory, commands: Self.commands)
          == ["--fake-src"], "\(command.name)")
      #expect(
        try CompletionTests.bashComplete(
          ["failclosed", command.name, "--fake-src", "fake-c"], in: directory,
          commands: Self.commands) == ["fake-checkout"], "\(command.name)")
      #expect(
        try CompletionTests.bashComplete(
          ["failclosed", command.name, "--sut", "fake"], in: directory, commands: Self.commands)
          == ["fake-source"], "\(command.name)")
    }
    let zsh = ShellCompletion.zsh(Self.commands)
    #expect(zsh.contains("'--fake-src[a test'\\''s checkout for fake-source]:DIR:_files -/'"))
  }

  @Test func itsOptionIsCheckedAndReachesItsPrepare() throws {
    let command = LeakAuditCommand(systems: Self.systems)
    func parse(_ words: [String]) throws -> ParsedArguments {
      try ArgumentParser.parse(words, options: command.options)
    }
    let alone = try parse(["--fake-src", "/x"])
    let chosen = try SystemUnderTestOption.systems(alone, in: Self.systems)
    #expect(chosen.map(\.name) == ["fake-source"])
    let setup = TestedSystems.plan(
      [], on: chosen[0], inputs: SystemUnderTestOption.inputs(alone, in: Self.systems))
    #expect(setup.unavailable?.reason == "checkout /x")
    #expect(
      throws: UsageError(
        "--fake-src /x is an option of fake-source; it contradicts --sut model (name "
          + "fake-source there, or leave the option out)")
    ) {
      try SystemUnderTestOption.systems(
        try parse(["--sut", "model", "--fake-src", "/x"]),
        in: Self.systems)
    }
    #expect(
      try SystemUnderTestOption.systems(
        try parse(["--sut", "model,fake-source", "--fake-src", "/x"]), in: Self.systems
      ).map(\.name) == ["model", "fake-source"])
    #expect(throws: UsageError.self) {
      try SystemUnderTestOption.system(
        try parse(["--fake-src", "/x", "--bitchat-src", "/y"]), in: Self.systems)
    }
    // Without the fake in the list, its option is unknown to the command.
    #expect(throws: UsageError("unknown option '--fake-src'")) {
      try ArgumentParser.parse(["--fake-src", "/x"], options: LeakAuditCommand().options)
    }
  }
}
