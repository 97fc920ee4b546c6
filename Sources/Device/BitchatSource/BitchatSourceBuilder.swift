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
    public let executable: String
    public let cached: Bool
    public let seconds: Double
  }

  /// The driver's path; builds first unless this key was built before. `progress` gets each
  /// line of the build's output.
  public func build(progress: @Sendable (String) -> Void) throws -> Result {
    let started = Date()
    if package.isBuilt {
      progress("bitchat-source: cached build \(package.key) (\(package.directory))")
      return Result(
        executable: package.executablePath, cached: true, seconds: Date().timeIntervalSince(started)
      )
    }
    progress(
      "bitchat-source: generating \(package.directory) from \(package.tree.root) (\(package.tree.files.count) files)"
    )
    for path in package.tree.absentOptional {
      progress("bitchat-source: optional file absent in this checkout: \(path)")
    }
    try package.write()
    progress("bitchat-source: building (first build of this key; about a minute on two cores)")
    let output = try runBuild(progress: progress)
    guard output.status == 0 else {
      let diagnostics = BitchatDiagnostics.parse(
        output.text, links: package.linkMap, root: package.tree.root)
      if let first = diagnostics.first { throw first }
      throw BitchatSourceError.buildFailed(
        output.text.split(separator: "\n").filter { $0.contains(": error: ") }.prefix(5).joined(
          separator: "\n"))
    }
    try package.key.write(
      toFile: package.directory + "/built.stamp", atomically: true, encoding: .utf8)
    let seconds = Date().timeIntervalSince(started)
    progress(
      "bitchat-source: built \(package.executablePath) in \(String(format: "%.1f", seconds)) s")
    return Result(executable: package.executablePath, cached: false, seconds: seconds)
  }

  /// Every product: the driver and the checks (BitchatShims/Checks).
  private func runBuild(progress: @Sendable (String) -> Void) throws -> (
    status: Int32, text: String
  ) {
    try SwiftBuildProcess.run(
      swiftExecutable, ["build", "--package-path", package.directory], progress: progress)
  }
}
