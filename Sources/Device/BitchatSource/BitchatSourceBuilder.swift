import FailClosedSupport
import Foundation

/// Builds the generated package (once per key), printing SwiftPM's progress, and turns a
/// failed build into an error that names the bitchat file, the symbol and the shim lacking it.
public struct BitchatSourceBuilder: Sendable {
  public let package: BitchatSourcePackage
  public let swiftExecutable: String

  public init(
    package: BitchatSourcePackage, swiftExecutable: String = BitchatSourceBuilder.defaultSwift()
  ) {
    self.package = package
    self.swiftExecutable = swiftExecutable
  }

  public static func defaultSwift() -> String {
    for candidate in ["/opt/swift/usr/bin/swift", "/usr/bin/swift"]
    where FileManager.default.isExecutableFile(atPath: candidate) {
      return candidate
    }
    return "swift"
  }

  public struct Result: Sendable {
    /// The package built: the first, or one without files that failed to compile here.
    public let package: BitchatSourcePackage
    public let executable: String
    public let cached: Bool
    public let seconds: Double
  }

  /// The driver's path; builds first unless this key was built before. `progress` gets each
  /// line of the build's output.
  public func build(progress: @Sendable (String) -> Void) throws -> Result {
    try PackageDirectoryLock.withLock(package.directory) { try buildLocked(progress: progress) }
  }

  private func buildLocked(progress: @Sendable (String) -> Void) throws -> Result {
    let started = Date()
    var package = self.package
    for round in 1...BitchatCompileFeedback.maxRounds {
      if package.isBuilt {
        // The key is the files' contents: another checkout with the same files may have
        // written the links; they now point at this one (the build itself stays valid).
        if !package.linksPointAtItsCheckout { try package.write() }
        progress("bitchat-source: cached build \(package.key) (\(package.directory))")
        return Result(
          package: package, executable: package.executablePath, cached: round == 1,
          seconds: Date().timeIntervalSince(started))
      }
      progress(
        "bitchat-source: generating \(package.directory) from \(package.tree.root): "
          + package.closure.summary)
      for path in package.tree.absentOptional {
        progress("bitchat-source: optional file absent in this checkout: \(path)")
      }
      try package.write()
      progress("bitchat-source: building (first build of this key; about a minute on two cores)")
      let output = try runBuild(package, progress: progress)
      if output.status == 0 {
        try package.key.write(
          toFile: package.directory + "/built.stamp", atomically: true, encoding: .utf8)
        let seconds = Date().timeIntervalSince(started)
        progress(
          "bitchat-source: built \(package.executablePath) in \(String(format: "%.1f", seconds)) s")
        return Result(
          package: package, executable: package.executablePath, cached: false, seconds: seconds)
      }
      let broughtAlong = Set(package.closure.files.map(\.relativePath)).subtracting(
        package.tree.files.map(\.relativePath))
      let failed = BitchatCompileFeedback.failedFiles(
        in: output.text, links: package.linkMap, candidates: broughtAlong)
      guard !failed.isEmpty, round < BitchatCompileFeedback.maxRounds else {
        throw BitchatDiagnostics.error(
          for: output.text, links: package.linkMap, closure: package.closure)
      }
      for (path, reason) in failed.sorted(by: { $0.key < $1.key }) {
        progress("bitchat-source: left out \(path): \(reason)")
      }
      package = try package.excluding(failed)
    }
    throw BitchatSourceError.buildFailed(
      "no build after \(BitchatCompileFeedback.maxRounds) rounds")
  }

  /// Every product: the driver and the checks (BitchatShims/Checks).
  private func runBuild(_ package: BitchatSourcePackage, progress: @Sendable (String) -> Void)
    throws -> (
      status: Int32, text: String
    )
  {
    try SwiftBuildProcess.run(
      swiftExecutable, ["build", "--package-path", package.directory], progress: progress)
  }
}
