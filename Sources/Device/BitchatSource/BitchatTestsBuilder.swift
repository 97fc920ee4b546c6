import Foundation

/// Builds the tests' package (once per key), printing SwiftPM's progress; a failed build is an
/// error naming the bitchat file (a test's or the app's), the symbol and the shim lacking it.
public struct BitchatTestsBuilder: Sendable {
  public let package: BitchatTestsPackage
  public let swiftExecutable: String

  public init(
    package: BitchatTestsPackage, swiftExecutable: String = BitchatSourceBuilder.defaultSwift()
  ) {
    self.package = package
    self.swiftExecutable = swiftExecutable
  }

  public struct Result: Sendable {
    public let package: BitchatTestsPackage
    public let cached: Bool
    public let seconds: Double
  }

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
        progress("bitchat-tests: cached build \(package.key) (\(package.directory))")
        return Result(
          package: package, cached: round == 1, seconds: Date().timeIntervalSince(started))
      }
      progress(
        "bitchat-tests: generating \(package.directory) from \(package.tests.root) "
          + "(\(package.tests.files.count) test files; \(package.lane.closure.summary))")
      for path in package.lane.tree.absentOptional + package.tests.absentOptional {
        progress("bitchat-tests: optional file absent in this checkout: \(path)")
      }
      try package.write()
      progress("bitchat-tests: building (first build of this key; a few minutes on two cores)")
      let (status, text) = try SwiftBuildProcess.run(
        swiftExecutable, ["build", "--build-tests", "--package-path", package.directory],
        progress: progress)
      if status == 0 {
        try package.key.write(
          toFile: package.directory + "/tests-built.stamp", atomically: true, encoding: .utf8)
        let seconds = Date().timeIntervalSince(started)
        progress("bitchat-tests: built in \(String(format: "%.1f", seconds)) s")
        return Result(package: package, cached: false, seconds: seconds)
      }
      let broughtAlong = Set(package.lane.closure.files.map(\.relativePath)).subtracting(
        package.lane.tree.files.map(\.relativePath))
      let failed = BitchatCompileFeedback.failedFiles(
        in: text, links: package.linkMap, candidates: broughtAlong)
      guard !failed.isEmpty, round < BitchatCompileFeedback.maxRounds else {
        throw BitchatDiagnostics.error(
          for: text, links: package.linkMap, closure: package.lane.closure)
      }
      for (path, reason) in failed.sorted(by: { $0.key < $1.key }) {
        progress("bitchat-tests: left out \(path): \(reason)")
      }
      package = try package.excluding(failed)
    }
    throw BitchatSourceError.buildFailed(
      "no build after \(BitchatCompileFeedback.maxRounds) rounds")
  }
}

extension BitchatSourceLocation {
  /// Finds the tree and its tests, generates and builds the tests' package (or reuses it).
  public static func prepareTests(
    bitchatSource: String?, cacheRoot: String? = nil, progress: @Sendable (String) -> Void
  ) throws -> BitchatTestsBuilder.Result {
    let tree = try BitchatTree(root: bitchatSource ?? defaultCheckout)
    let package = try BitchatTestsPackage(
      tree: tree, packageRoot: packageRoot, cacheRoot: cacheRoot ?? self.cacheRoot)
    return try BitchatTestsBuilder(package: package).build(progress: progress)
  }
}
