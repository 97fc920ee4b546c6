import FailClosedCLI
import FailClosedSupport
import Foundation
import TestSupport
import Testing

/// The completion scripts and `--help` come from one table: every command and option that
/// `--help` prints is completed, and nothing else is. The bash script is loaded into a real
/// bash and asked to complete words, as a shell would.
@Suite struct CompletionTests {
  /// Commands as `failclosed --help` lists them.
  static var helpCommands: [String] {
    let lines = FailClosedMain.helpText().split(separator: "\n", omittingEmptySubsequences: false)
    guard let start = lines.firstIndex(of: "Commands:") else { return [] }
    return lines[(start + 1)...].prefix { !$0.isEmpty }.map {
      String($0.split(separator: " ")[0])
    }
  }

  /// Options as `failclosed COMMAND --help` lists them.
  static func helpOptions(_ command: any Command) -> Set<String> {
    let lines = command.helpText.split(separator: "\n", omittingEmptySubsequences: false)
    // The option list: the lines after "Options:" (or the last lines, for a command without
    // options, where only --help is listed).
    let list = lines.lastIndex(of: "Options:").map { lines[($0 + 1)...] } ?? lines.suffix(1)
    return Set(
      list.filter { $0.hasPrefix("  -") }.map {
        String($0.dropFirst(2).split(separator: " ")[0])
      })
  }

  /// Asks bash's completion function for the words that complete `words` (the last one being
  /// completed), with the script generated from `commands` loaded.
  static func bashComplete(
    _ words: [String], in directory: String, commands: [any Command] = FailClosedMain.commands
  ) throws -> [String] {
    let script = directory + "/failclosed.bash"
    try ShellCompletion.bash(commands).write(
      toFile: script, atomically: true, encoding: .utf8)
    let quoted = words.map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
    let program = """
      source \(script)
      complete -p failclosed >/dev/null || { echo "not registered"; exit 3; }
      COMP_WORDS=(\(quoted.joined(separator: " ")))
      COMP_CWORD=\(words.count - 1)
      COMP_LINE="${COMP_WORDS[*]}"
      COMP_POINT=${#COMP_LINE}
      _failclosed
      printf '%s\\n' "${COMPREPLY[@]}"
      """
    let result = try RepositoryFiles.run(
      "/bin/bash", ["--norc", "--noprofile", "-c", program], directory: directory)
    #expect(result.status == 0, "\(result.output)")
    return result.output.split(separator: "\n").map(String.init)
  }

  @Test func bashCompletesEveryCommandAndEveryOptionOfHelpAndNothingElse() throws {
    let directory = try RepositoryFiles.temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let commands = Self.helpCommands
    #expect(commands.count == FailClosedMain.commands.count)
    #expect(commands.contains("exec") && commands.contains("completion"))
    let top = try Self.bashComplete(["failclosed", ""], in: directory)
    #expect(Set(top) == Set(commands + ["--help", "--version"]))
    for command in FailClosedMain.commands {
      let completed = try Self.bashComplete(["failclosed", command.name, "-"], in: directory)
      #expect(
        Set(completed) == Self.helpOptions(command), "options of \(command.name) differ from --help"
      )
    }
  }

  @Test func bashCompletesAPrefixAValueAndAnAction() throws {
    let directory = try RepositoryFiles.temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    #expect(try Self.bashComplete(["failclosed", "lea"], in: directory) == ["leak-audit"])
    #expect(
      Set(try Self.bashComplete(["failclosed", "exec", "--allow"], in: directory))
        == ["--allow", "--allow-from-consensus"])
    #expect(
      try Self.bashComplete(["failclosed", "leak-audit", "--lane", ""], in: directory)
        == ["mock", "real", "all"])
    #expect(try Self.bashComplete(["failclosed", "exec", "--tor", "r"], in: directory) == ["real"])
    #expect(try Self.bashComplete(["failclosed", "testnet", "st"], in: directory) == ["status"])
    #expect(
      Set(try Self.bashComplete(["failclosed", "completion", ""], in: directory))
        == ["bash", "zsh"])
    // A file argument completes file names; after `exec --`, a program name.
    _ = FileManager.default.createFile(atPath: directory + "/capture-one.pcap", contents: nil)
    #expect(
      try Self.bashComplete(["failclosed", "audit", "capture-o"], in: directory)
        == ["capture-one.pcap"])
    #expect(
      try Self.bashComplete(["failclosed", "exec", "--", "bas"], in: directory).contains("bash"))
    // A value without a fixed set (a number) offers nothing rather than options.
    #expect(try Self.bashComplete(["failclosed", "leak-audit", "--jobs", ""], in: directory) == [])
  }

  @Test func zshDeclaresEveryCommandAndEveryOptionOfHelpAndNothingElse() throws {
    let script = ShellCompletion.zsh(FailClosedMain.commands)
    let lines = script.split(separator: "\n").map(String.init)
    // The command list: lines 'name:summary' between "commands=(" and ")".
    guard let open = lines.firstIndex(where: { $0.hasSuffix("commands=(") }) else {
      Issue.record("no command list in the zsh script")
      return
    }
    let listed = lines[(open + 1)...].prefix { $0.trimmingCharacters(in: .whitespaces) != ")" }
      .map { $0.trimmingCharacters(in: .whitespaces).dropFirst().prefix { $0 != ":" } }
      .map(String.init)
    #expect(listed == Self.helpCommands)
    // Each command's branch: the options its _arguments specs declare.
    for command in FailClosedMain.commands {
      guard let start = lines.firstIndex(of: "    \(command.name))") else {
        Issue.record("no branch for \(command.name)")
        continue
      }
      let branch = lines[(start + 1)...].prefix { $0 != "      ;;" }
      let declared = Set(
        branch.compactMap { line -> String? in
          let spec = line.trimmingCharacters(in: .whitespaces)
          guard spec.hasPrefix("'-") || spec.hasPrefix("'*-") else { return nil }
          let name = spec.drop { $0 == "'" || $0 == "*" }.prefix { $0 != "[" }
          return String(name)
        })
      #expect(declared == Self.helpOptions(command), "zsh options of \(command.name)")
    }
  }

  @Test(
    .needs(
      "needs zsh (tools/install-deps --test)",
      if: FileManager.default.isExecutableFile(atPath: "/usr/bin/zsh")))
  func zshParsesAndRegistersTheScript() throws {
    try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/zsh"), "zsh is missing")
    let directory = try RepositoryFiles.temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let script = directory + "/_failclosed"
    try ShellCompletion.zsh(FailClosedMain.commands).write(
      toFile: script, atomically: true, encoding: .utf8)
    let result = try RepositoryFiles.run("/usr/bin/zsh", ["-n", script])
    #expect(result.status == 0, "\(result.output)")
    // Loaded after compinit, it registers itself for failclosed.
    let loaded = try RepositoryFiles.run(
      "/usr/bin/zsh",
      [
        "-f", "-c",
        "autoload -U compinit; compinit -u -D; source \(script); print -r -- ${_comps[failclosed]}",
      ], directory: directory)
    #expect(loaded.output == "_failclosed\n", "\(loaded.output)")
  }

  @Test func theCommandPrintsTheScriptsAndRefusesAnUnknownShell() async {
    #expect(await FailClosedMain.run(["completion", "bash"]) == ExitCode.pass)
    #expect(await FailClosedMain.run(["completion", "fish"]) == ExitCode.usage)
    #expect(await FailClosedMain.run(["completion"]) == ExitCode.usage)
  }

  @Test func versionNamesTorLibpcapAndOpenSSL() {
    let lines = VersionCommand.text().split(separator: "\n").map(String.init)
    #expect(lines.first == "failclosed \(VersionCommand.version)")
    #expect(lines.contains { $0.hasPrefix("tor ") || $0.hasPrefix("tor: not found") })
    #expect(lines.contains { $0.hasPrefix("libpcap version ") })
    #expect(lines.contains { $0.hasPrefix("OpenSSL ") })
  }
}
