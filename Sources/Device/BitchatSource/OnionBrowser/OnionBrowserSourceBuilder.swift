import FailClosedSupport
import Foundation

/// Builds the generated package once per key (SwiftPM's progress to `progress`), and turns a
/// failed build into an error naming Onion Browser's file, the symbol and the shim lacking it
/// (OnionBrowserDiagnostics).
public struct OnionBrowserSourceBuilder: Sendable {
  public let package: OnionBrowserSourcePackage
  public let swiftExecutable: String

  public init(
    package: OnionBrowserSourcePackage,
    swiftExecutable: String = BitchatSourceBuilder.defaultSwift()
  ) {
    self.package = package
    self.swiftExecutable = swiftExecutable
  }

  public struct Result: Sendable {
    public let executable: String
    public let cached: Bool
    public let version: OnionBrowserTree.Version
  }

  public func build(progress: @Sendable (String) -> Void) throws -> Result {
    try PackageDirectoryLock.withLock(package.directory) {
      let version = package.tree.version
      if package.isBuilt {
        // Another checkout with the same files may have written the links.
        try package.write()
        progress("onion-browser-source: cached build \(package.key) (\(package.directory))")
        return Result(executable: package.executablePath, cached: true, version: version)
      }
      progress(
        "onion-browser-source: generating \(package.directory) from \(package.tree.root) "
          + "(\(version.profileName): \(package.tree.files.joined(separator: ", ")); stand-ins "
          + "\(package.standIns.joined(separator: ", ")))")
      try package.write()
      progress("onion-browser-source: building (first build of this key; minutes on two cores)")
      let output = try SwiftBuildProcess.run(
        swiftExecutable,
        [
          "build", "-j", "1", "--package-path", package.directory, "--product",
          OnionBrowserSourcePackage.executableName,
        ],
        progress: progress)
      guard output.status == 0 else {
        throw OnionBrowserDiagnostics.error(
          for: output.text, links: package.linkMap, root: package.tree.root)
      }
      try package.key.write(toFile: package.stampPath, atomically: true, encoding: .utf8)
      progress("onion-browser-source: built \(package.executablePath)")
      return Result(executable: package.executablePath, cached: false, version: version)
    }
  }
}

/// The compiler's diagnostics in Onion Browser's files: the first name the build does not know
/// becomes ``OnionBrowserSourceError/unknownSymbol`` with the shim that would provide it.
public enum OnionBrowserDiagnostics {
  public static func error(for output: String, links: [String: String], root: String)
    -> OnionBrowserSourceError
  {
    if let first = parse(output, links: links, root: root).first { return first }
    return .buildFailed(CompilerErrorLines.summary(output))
  }

  public static func parse(_ output: String, links: [String: String], root: String)
    -> [OnionBrowserSourceError]
  {
    CompilerErrorLines.unknownSymbols(in: output, links: links).map { entry in
      .unknownSymbol(
        file: root + "/" + entry.relative, line: entry.line, symbol: entry.symbol,
        shim: shim(for: entry.symbol, owner: entry.owner), diagnostic: entry.message)
    }
  }

  /// The shim that would provide `symbol` (looked up in `owner`, when the compiler says).
  public static func shim(for symbol: String, owner: String?) -> String {
    if owner == "module" {
      return "no shim module named \(symbol) (OnionBrowserShims/\(symbol))"
    }
    let name = owner ?? symbol
    let unqualified = name.split(separator: "<").first.map(String.init) ?? name
    let base = unqualified.split(separator: ".").first.map(String.init) ?? unqualified
    if base.hasPrefix("Tor") || base.hasPrefix("TOR") || base == "OSLogType" || base == "Bundle" {
      return "the Tor.framework shim (OnionBrowserShims/Tor)"
    }
    if ["Transport", "IpSupport", "IPtProxyUI", "BuiltInBridges"].contains(base) {
      return "the IPtProxyUI shim (OnionBrowserShims/IPtProxyUI)"
    }
    if base.hasPrefix("NW") || ["IPv4Address", "IPv6Address", "Network"].contains(base) {
      return "the Network shim (BitchatShims/Network)"
    }
    if base.hasPrefix("NE") {
      return "the NetworkExtension shim (OnionBrowserShims/NetworkExtension)"
    }
    if base.hasPrefix("UI") || base.hasPrefix("WK") {
      return "UIKit/WebKit (no shim: OnionBrowserShims has none)"
    }
    return "the app stand-ins (OnionBrowserShims/AppStandIns)"
  }
}
