import BitchatSource
import Foundation

/// `failclosed bitchat-source build`: generates and builds the bitchat-source lane's package
/// from a bitchat checkout (cached by the sources' hashes) and prints the driver's path.
public struct BitchatSourceCommand: Command {
  public init() {}
  public let name = "bitchat-source"
  public let summary =
    "build bitchat's real Tor layer with the project's shims (the bitchat-source lane)"
  public let usage = """
    Usage: failclosed bitchat-source build [--bitchat-src DIR] [--cache DIR]

    Finds bitchat's Tor-layer files by path in a bitchat checkout (default
    ../shared/upstream/bitchat beside the package), generates a SwiftPM package in a cache
    directory keyed by the files' hashes, compiles them unmodified with the project's shims
    (BitchatShims/) and prints the driver's path. A second run with the same files does not
    rebuild.
    """
  public let options: [OptionSpec] = [
    OptionSpec(
      "bitchat-src", .single, valueName: "DIR", help: "a bitchat checkout", values: .directory),
    OptionSpec(
      "cache", .single, valueName: "DIR", help: "build cache (default ~/.cache/failclosed)",
      values: .directory),
  ]

  public func run(_ arguments: ParsedArguments) async throws -> Int32 {
    guard arguments.positional.first == "build" else {
      FailClosedMain.printError(
        "failclosed bitchat-source: expected 'build'. Run 'failclosed bitchat-source --help'.")
      return ExitCode.usage
    }
    do {
      let result = try BitchatSourceLocation.prepare(
        bitchatSource: arguments.value("bitchat-src"),
        cacheRoot: arguments.value("cache").map { $0 + "/bitchat-source" },
        progress: { line in FailClosedMain.printError(line) })
      print(result.executable)
      return ExitCode.pass
    } catch let error as BitchatSourceError {
      FailClosedMain.printError("failclosed bitchat-source: \(error)")
      return ExitCode.usage
    }
  }
}
