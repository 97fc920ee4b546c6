/// `failclosed completion bash|zsh`: prints a completion script made from the same command
/// table `--help` prints (see ``ShellCompletion``).
public struct CompletionCommand: Command {
  public init() {}
  public let name = "completion"
  public let summary = "print a bash or zsh completion script"
  public let usage = """
    Usage: failclosed completion bash|zsh

    Prints a completion script for the shell, made from the same command table as --help:
    commands, their options, option values (lanes, personalities, directories, files) and
    testnet's actions.
      source <(failclosed completion bash)      # this shell only
      failclosed completion bash > /usr/share/bash-completion/completions/failclosed
      failclosed completion zsh > "${fpath[1]}/_failclosed"
    tools/install installs both.
    """
  public let options: [OptionSpec] = []
  public let positionalWords = ["bash", "zsh"]

  public func run(_ arguments: ParsedArguments) async throws -> Int32 {
    guard arguments.positional.count == 1, let shell = arguments.positional.first else {
      throw UsageError("expected one shell: bash or zsh")
    }
    switch shell {
    case "bash": print(ShellCompletion.bash(FailClosedMain.commands), terminator: "")
    case "zsh": print(ShellCompletion.zsh(FailClosedMain.commands), terminator: "")
    default: throw UsageError("unknown shell '\(shell)' (expected bash or zsh)")
    }
    return ExitCode.pass
  }
}
