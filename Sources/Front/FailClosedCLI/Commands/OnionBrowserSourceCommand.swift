import BitchatSource
import FailClosedSupport
import Foundation

/// `failclosed onion-browser-source build`: generates and builds the onion-browser-source
/// lane's package from an Onion Browser checkout (docs/onion-browser-source.md) and prints the
/// driver's path.
public struct OnionBrowserSourceCommand: Command {
  public init() {}
  public let name = "onion-browser-source"
  public let summary =
    "build Onion Browser's own Tor layer with the project's shims (the onion-browser-source lane)"
  public let usage = """
    Usage: failclosed onion-browser-source build --onion-browser-src SRC [--cache DIR]

    SRC is an Onion Browser checkout (2.X: OnionBrowser/OnionManager.swift; 3.X:
    OnionBrowser/TorManager.swift with the built-in tor), REPO@COMMIT (a clone, bare or not:
    the commit's Swift files are exported with git archive into the cache), or pinned:2.X /
    pinned:3.X (the commits baselines/onion-browser-commits.json pins, from the clone at
    $FAILCLOSED_ONION_BROWSER_REPO). Onion Browser's Tor layer, FileManager+Helpers.swift and
    URL+Helpers.swift are compiled unmodified against OnionBrowserShims/ (Tor.framework,
    IPtProxyUI, NetworkExtension, the stand-ins for the UIKit files they read) and
    BitchatShims/ (Network, the URLSession with Apple's proxy semantics), with the driver
    (OnionBrowserShims/Driver). The package is cached by the files' hashes. A failed build
    names Onion Browser's file and line, the symbol and the shim lacking it.
    """
  public let options: [OptionSpec] = [
    OptionSpec(
      "onion-browser-src", .single, valueName: "SRC",
      help: "an Onion Browser checkout, REPO@COMMIT or pinned:2.X|3.X", values: .directory),
    OptionSpec(
      "cache", .single, valueName: "DIR", help: "build cache (default ~/.cache/failclosed)",
      values: .directory),
  ]

  public func run(_ arguments: ParsedArguments) async throws -> Int32 {
    guard arguments.positional.first == "build", let source = arguments.value("onion-browser-src")
    else {
      FailClosedMain.printError(
        "failclosed onion-browser-source: expected 'build --onion-browser-src SRC'. Run "
          + "'failclosed onion-browser-source --help'.")
      return ExitCode.usage
    }
    do {
      let result = try OnionBrowserSourceLocation.prepare(
        onionBrowserSource: source,
        cacheRoot: arguments.value("cache").map { $0 + "/onion-browser-source" },
        progress: { line in FailClosedMain.printError(line) })
      print(result.executable)
      return ExitCode.pass
    } catch let error as OnionBrowserSourceError {
      FailClosedMain.printError("failclosed onion-browser-source: \(error)")
      return ExitCode.usage
    }
  }
}
