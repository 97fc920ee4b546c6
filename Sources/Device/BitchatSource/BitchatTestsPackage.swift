import Digest
import Foundation

/// The package `failclosed bitchat-tests` builds: the lane's package (BitchatSourcePackage,
/// written as the lane writes it) plus bitchat's app files as a module named `bitchat`, as the
/// Xcode project names it, so the tests' `@testable import bitchat` resolves (SwiftPM compiles
/// debug builds with testing enabled, which opens internal declarations to it), and bitchat's
/// test files, linked in place: the XCTest files in an executable with a generated registration
/// (XCTestRegistration), the Swift Testing files in a test target. Its directory is keyed by the
/// lane's key and the test files' hashes, and built once per key.
public struct BitchatTestsPackage: Sendable {
  static let layoutVersion = "2"
  public static let xctestRunner = "bitchatXCTests"
  /// SwiftPM names the test product after the package.
  public static let swiftTestingBundle = "BitchatSourcePackageTests.xctest"
  /// Where the test files go: the XCTest runner's sources mirror the checkout's layout so that a
  /// test's `#filePath` three levels up is the package directory (where `relays` is linked), as
  /// it is the checkout's root in Xcode.
  static let xctestDirectory = "bitchatTests"
  static let swiftTestingDirectory = "bitchatSwiftTesting"
  /// The stand-ins' cryptography against the specifications' vectors (BitchatShims/StandInChecks
  /// with the app stand-ins).
  public static let standInChecks = "standInChecks"

  public let lane: BitchatSourcePackage
  public let tests: BitchatTestFiles
  public let key: String

  public init(tree: BitchatTree, packageRoot: String, cacheRoot: String) throws(BitchatSourceError)
  {
    let tests = try BitchatTestFiles(tree: tree)
    let laneKey = try BitchatSourcePackage(
      tree: tree, packageRoot: packageRoot, cacheRoot: cacheRoot
    )
    .key
    var material = Array("bitchat-tests layout \(Self.layoutVersion)\nlane \(laneKey)\n".utf8)
    for file in tests.files {
      material += Array("test \(file.relativePath)\n".utf8)
      material += SHA256.hash(
        Array(
          (try? Data(contentsOf: URL(fileURLWithPath: tree.root + "/" + file.relativePath)))
            ?? Data()))
    }
    key = SHA256.hash(material).prefix(8).map { String(format: "%02x", $0) }.joined()
    self.tests = tests
    // What the tests use of the app counts too: bitchat's own files for it come along.
    let seeds = tests.files.map { file in
      BitchatSourceClosure.Seed(
        name: "test:" + file.relativePath, module: BitchatCheckoutIndex.appModule,
        outline: SwiftSourceOutline(
          source: (try? String(contentsOfFile: tree.root + "/" + file.relativePath, encoding: .utf8))
            ?? ""), relativePath: nil)
    }
    lane = try BitchatSourcePackage(
      tree: tree, packageRoot: packageRoot, cacheRoot: cacheRoot + "/tests-" + key,
      extraSeeds: seeds)
  }

  private init(lane: BitchatSourcePackage, tests: BitchatTestFiles, key: String) {
    self.lane = lane
    self.tests = tests
    self.key = key
  }

  /// The same package with the checkout files that failed to compile here left out.
  func excluding(_ failed: [String: String]) throws -> BitchatTestsPackage {
    BitchatTestsPackage(lane: try lane.excluding(failed), tests: tests, key: key)
  }

  public var directory: String { lane.directory }

  /// Whether the app module's and the tests' links lead to this checkout.
  var linksPointAtItsCheckout: Bool {
    linkMap.allSatisfy { link, relative in
      (try? FileManager.default.destinationOfSymbolicLink(atPath: link))
        == tests.root + "/" + relative
    }
  }
  public var xctestRunnerPath: String { directory + "/.build/debug/" + Self.xctestRunner }
  public var swiftTestingPath: String { directory + "/.build/debug/" + Self.swiftTestingBundle }
  public var standInChecksPath: String { directory + "/.build/debug/" + Self.standInChecks }
  var stampPath: String { directory + "/tests-built.stamp" }
  var hasXCTest: Bool { tests.files.contains { $0.framework == .xctest } }
  var hasSwiftTesting: Bool { tests.files.contains { $0.framework == .swiftTesting } }

  public var isBuilt: Bool {
    FileManager.default.fileExists(atPath: stampPath)
      && (!hasXCTest || FileManager.default.isExecutableFile(atPath: xctestRunnerPath))
      && (!hasSwiftTesting || FileManager.default.fileExists(atPath: swiftTestingPath))
      && FileManager.default.isExecutableFile(atPath: standInChecksPath)
  }

  /// Generated path -> bitchat path, for diagnostics: the lane's links, the app module's and the
  /// tests'.
  public var linkMap: [String: String] {
    var map = lane.linkMap
    for file in lane.closure.files where file.module == BitchatCheckoutIndex.appModule {
      map[directory + "/Sources/bitchat/\(file.relativePath)"] = file.relativePath
    }
    for file in tests.files {
      for place in placements(file) { map[directory + "/" + place] = file.relativePath }
    }
    return map
  }

  /// Where a test file is linked in the package (TestConstants goes to both targets).
  func placements(_ file: BitchatTestFiles.File) -> [String] {
    let inRunner = Self.xctestDirectory + "/" + file.relativePath.dropFirst("bitchatTests/".count)
    let inTestTarget = Self.swiftTestingDirectory + "/" + file.name
    switch file.framework {
    case .xctest: return [inRunner]
    case .swiftTesting: return [inTestTarget]
    case .support:
      return (hasXCTest ? [inRunner] : []) + (hasSwiftTesting ? [inTestTarget] : [])
    }
  }

  /// Writes the lane's package, then the app module, the tests' links and the manifest's
  /// additions. Idempotent.
  public func write() throws {
    try lane.write()
    let manager = FileManager.default
    let app = directory + "/Sources/bitchat"
    try? manager.removeItem(atPath: app)
    try manager.createDirectory(atPath: app, withIntermediateDirectories: true)
    // The lane's app module without its driver.
    for file in lane.closure.files where file.module == BitchatCheckoutIndex.appModule {
      let path = app + "/" + file.relativePath
      try manager.createDirectory(
        atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
      try manager.createSymbolicLink(
        atPath: path, withDestinationPath: lane.tree.root + "/" + file.relativePath)
    }
    try manager.copyItem(
      atPath: directory + "/Sources/BitchatApp/ModuleImports.swift",
      toPath: app + "/ModuleImports.swift")
    try lane.writeAppShims(into: app, driver: false)
    let checks = directory + "/StandInChecks"
    try? manager.removeItem(atPath: checks)
    try manager.createDirectory(atPath: checks, withIntermediateDirectories: true)
    for shim in ["StandInChecks", "AppStandIns"] {
      for path in BitchatSourcePackage.files(under: lane.shimsDirectory + "/" + shim) {
        try manager.createSymbolicLink(
          atPath: checks + "/" + (path as NSString).lastPathComponent,
          withDestinationPath: lane.shimsDirectory + "/" + shim + "/" + path)
      }
    }
    for directory in [Self.xctestDirectory, Self.swiftTestingDirectory, "relays"] {
      try? manager.removeItem(atPath: self.directory + "/" + directory)
    }
    for file in tests.files {
      for place in placements(file) {
        let path = directory + "/" + place
        try manager.createDirectory(
          atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try manager.createSymbolicLink(
          atPath: path, withDestinationPath: tests.root + "/" + file.relativePath)
      }
    }
    if hasXCTest {
      try XCTestRegistration.mainSource(tests.files).write(
        toFile: directory + "/" + Self.xctestDirectory + "/main.swift", atomically: true,
        encoding: .utf8)
    }
    if tests.hasRelayDirectory {
      try manager.createSymbolicLink(
        atPath: directory + "/relays",
        withDestinationPath: tests.root + "/" + BitchatTestFiles.relayDirectory)
    }
    try (lane.manifest() + manifestAdditions()).write(
      toFile: directory + "/Package.swift", atomically: true, encoding: .utf8)
  }

  /// Appended to the lane's manifest: the app's module and its settings are taken from the
  /// lane's BitchatApp target, so the tests build against exactly what the lane builds.
  func manifestAdditions() -> String {
    var targets = [
      #".target(name: "bitchat", dependencies: app.dependencies, path: "Sources/bitchat", swiftSettings: app.swiftSettings)"#,
      #".executableTarget(name: "\#(Self.standInChecks)", dependencies: ["Combine", "COpenSSL"], path: "StandInChecks", swiftSettings: [.swiftLanguageMode(.v5)])"#,
    ]
    if hasXCTest {
      targets.append(
        #".executableTarget(name: "\#(Self.xctestRunner)", dependencies: ["bitchat"] + app.dependencies, path: "\#(Self.xctestDirectory)", swiftSettings: app.swiftSettings)"#
      )
    }
    if hasSwiftTesting {
      targets.append(
        #".testTarget(name: "bitchatTests", dependencies: ["bitchat"] + app.dependencies, path: "\#(Self.swiftTestingDirectory)", swiftSettings: app.swiftSettings)"#
      )
    }
    return """

      // failclosed bitchat-tests: bitchat's app files as the module `bitchat` (the tests'
      // `@testable import bitchat`) and bitchat's own tests; the lane's driver and checks are
      // not built here.
      let app = package.targets.first { $0.name == "BitchatApp" }!
      package.products = []
      package.targets.removeAll { $0.name == "BitchatApp" || $0.name == "Checks" }
      package.targets += [
        \(targets.joined(separator: ",\n  "))
      ]

      """
  }
}
