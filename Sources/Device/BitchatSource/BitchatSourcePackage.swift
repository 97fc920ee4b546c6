import Digest
import Foundation

/// The SwiftPM package the lane generates in a cache directory: bitchat's files compiled in
/// place (symbolic links to the checkout, never copies), the project's shims (BitchatShims/)
/// and the project modules the `apple` transport is built on. Its directory is keyed by the
/// hashes of every input file, so it is made and built once per set of sources.
public struct BitchatSourcePackage: Sendable {
  /// Shim directories under BitchatShims/ and the module each becomes.
  static let shimTargets = [
    "Combine", "Network", "FoundationNetworkingShim", "ArtiLinux", "AppStandIns", "Driver",
    "Checks",
  ]
  /// Project modules linked into the shims (the `apple` transport's SOCKS, TLS, HTTP, WebSocket).
  static let projectModules = [
    "FailClosedSupport", "Digest", "SOCKS", "HTTPCodec", "TLS", "COpenSSL",
  ]
  /// Bumped when the generated layout changes, so old caches are not reused.
  static let layoutVersion = "3"

  public let tree: BitchatTree
  public let shimsDirectory: String
  public let projectSources: String
  public let directory: String
  public let key: String

  public static let executableName = "bitchat-source-driver"
  /// The shims' and arti.h's checks (BitchatShims/Checks), run by the project's tests.
  public static let checksName = "bitchat-source-checks"

  public init(tree: BitchatTree, packageRoot: String, cacheRoot: String) throws(BitchatSourceError)
  {
    self.tree = tree
    shimsDirectory = packageRoot + "/BitchatShims"
    projectSources = packageRoot + "/Sources"
    guard FileManager.default.fileExists(atPath: shimsDirectory + "/Combine") else {
      throw .noShims(shimsDirectory)
    }
    key = Self.key(tree: tree, shims: shimsDirectory, projectSources: projectSources)
    directory = cacheRoot + "/" + key
  }

  /// SHA-256 over every bitchat file (path and bytes), every shim file and every file of the
  /// project modules linked in (a change to the transport's SOCKS or TLS code must rebuild the
  /// driver, or the lane would test stale code), first 16 hex digits.
  static func key(tree: BitchatTree, shims: String, projectSources: String) -> String {
    var material: [UInt8] = Array("layout \(layoutVersion)\n".utf8)
    for file in tree.files.sorted(by: { $0.relativePath < $1.relativePath }) {
      material += Array("bitchat \(file.relativePath)\n".utf8)
      material += SHA256.hash(
        Array((try? Data(contentsOf: URL(fileURLWithPath: tree.absolutePath(file)))) ?? Data()))
    }
    for path in Self.files(under: shims) {
      material += Array("shim \(path)\n".utf8)
      material += SHA256.hash(
        Array((try? Data(contentsOf: URL(fileURLWithPath: shims + "/" + path))) ?? Data()))
    }
    for module in projectModules {
      let folder = Self.moduleFolder(module, in: projectSources)
      for path in Self.files(under: folder) {
        material += Array("project \(module)/\(path)\n".utf8)
        material += SHA256.hash(
          Array((try? Data(contentsOf: URL(fileURLWithPath: folder + "/" + path))) ?? Data()))
      }
    }
    return SHA256.hash(material).prefix(8).map { String(format: "%02x", $0) }.joined()
  }

  /// A project module's folder: Sources/<layer>/<module> (docs/architecture.md), found in
  /// whichever layer holds it.
  static func moduleFolder(_ module: String, in sources: String) -> String {
    let layers = (try? FileManager.default.contentsOfDirectory(atPath: sources)) ?? []
    for layer in layers.sorted()
    where FileManager.default.fileExists(
      atPath: sources + "/" + layer + "/" + module)
    {
      return sources + "/" + layer + "/" + module
    }
    return sources + "/" + module
  }

  static func files(under directory: String) -> [String] {
    guard let enumerator = FileManager.default.enumerator(atPath: directory) else { return [] }
    var paths: [String] = []
    while let path = enumerator.nextObject() as? String {
      if path.hasSuffix(".swift") { paths.append(path) }
    }
    return paths.sorted()
  }

  /// Where the built driver is.
  public var executablePath: String { directory + "/.build/debug/" + Self.executableName }
  public var checksPath: String { directory + "/.build/debug/" + Self.checksName }
  var stampPath: String { directory + "/built.stamp" }

  /// Whether this key was built before and its driver is still there.
  public var isBuilt: Bool {
    FileManager.default.fileExists(atPath: stampPath)
      && FileManager.default.isExecutableFile(atPath: executablePath)
      && FileManager.default.isExecutableFile(atPath: checksPath)
  }

  /// Generated symlink path (inside the package) -> bitchat path, for diagnostics.
  public var linkMap: [String: String] {
    var map: [String: String] = [:]
    for file in tree.files {
      map[directory + "/Sources/\(file.target)/\(file.name)"] = file.relativePath
    }
    return map
  }

  /// Writes the package: Package.swift and Sources/ of links. Idempotent.
  public func write() throws {
    let manager = FileManager.default
    let sources = directory + "/Sources"
    try? manager.removeItem(atPath: sources)
    try manager.createDirectory(atPath: sources, withIntermediateDirectories: true)
    for module in Self.projectModules {
      try manager.createSymbolicLink(
        atPath: sources + "/" + module,
        withDestinationPath: Self.moduleFolder(module, in: projectSources))
    }
    for module in ["Combine", "Network", "FoundationNetworkingShim", "ArtiLinux", "Checks"] {
      try manager.createSymbolicLink(
        atPath: sources + "/" + module, withDestinationPath: shimsDirectory + "/" + module)
    }
    for target in ["BitLogger", "Tor", "BitchatApp"] {
      try manager.createDirectory(atPath: sources + "/" + target, withIntermediateDirectories: true)
    }
    for file in tree.files {
      try manager.createSymbolicLink(
        atPath: sources + "/\(file.target)/\(file.name)",
        withDestinationPath: tree.absolutePath(file))
    }
    // The app module: bitchat's app files, the stand-ins for the app types they mention, and
    // the driver (in the same module, as AppRuntime is in the app, so it reaches the internal
    // types the way the app does).
    for shim in ["AppStandIns", "Driver"] {
      for path in Self.files(under: shimsDirectory + "/" + shim) {
        let name = (path as NSString).lastPathComponent
        try manager.createSymbolicLink(
          atPath: sources + "/BitchatApp/" + (name == "main.swift" ? name : "\(shim)-\(name)"),
          withDestinationPath: shimsDirectory + "/" + shim + "/" + path)
      }
    }
    try manifest().write(toFile: directory + "/Package.swift", atomically: true, encoding: .utf8)
  }

  /// Package.swift: Swift 5 mode and -D DEBUG for bitchat's files as the app builds them; the
  /// FoundationNetworking shim imported into every bitchat file (Apple's Foundation brings
  /// URLSession and Combine's ObservableObject; Linux's does not).
  func manifest() -> String {
    var defines = [#".define("DEBUG")"#]
    if tree.has("bitchat/Nostr/NostrRelaySettings.swift") {
      defines.append(#".define("BITCHAT_HAS_RELAY_SETTINGS")"#)
    }
    if tree.has("bitchat/Services/NetworkReachabilityMonitor.swift") {
      defines.append(#".define("BITCHAT_HAS_REACHABILITY_MONITOR")"#)
    }
    return """
      // swift-tools-version:6.0
      // Generated by failclosed (bitchat-source lane). Do not edit: regenerated from the sources.
      import PackageDescription

      let bitchat: [SwiftSetting] = [
        .swiftLanguageMode(.v5), \(defines.joined(separator: ", ")),
        .unsafeFlags(["-Xfrontend", "-import-module", "-Xfrontend", "FoundationNetworkingShim"]),
      ]
      let package = Package(
        name: "BitchatSource",
        products: [
          .executable(name: "\(Self.executableName)", targets: ["BitchatApp"]),
          .executable(name: "\(Self.checksName)", targets: ["Checks"]),
        ],
        targets: [
          .systemLibrary(name: "COpenSSL", pkgConfig: "openssl"),
          .target(name: "FailClosedSupport"),
          .target(name: "Digest"),
          .target(name: "SOCKS"),
          .target(name: "HTTPCodec", dependencies: ["Digest"]),
          .target(name: "TLS", dependencies: ["COpenSSL", "HTTPCodec", "FailClosedSupport"]),
          .target(name: "Combine", swiftSettings: [.swiftLanguageMode(.v5)]),
          .target(name: "Network", swiftSettings: [.swiftLanguageMode(.v5)]),
          .target(
            name: "FoundationNetworkingShim",
            dependencies: ["Combine", "TLS", "SOCKS", "HTTPCodec", "FailClosedSupport"],
            swiftSettings: [.swiftLanguageMode(.v5)]),
          .target(name: "ArtiLinux", dependencies: ["FailClosedSupport"]),
          .target(name: "BitLogger", dependencies: ["FoundationNetworkingShim"], swiftSettings: bitchat),
          .target(
            name: "Tor", dependencies: ["BitLogger", "Combine", "Network", "ArtiLinux", "FoundationNetworkingShim"],
            swiftSettings: bitchat),
          .executableTarget(
            name: "BitchatApp",
            dependencies: ["Tor", "BitLogger", "Combine", "Network", "FoundationNetworkingShim", "ArtiLinux"],
            swiftSettings: bitchat),
          .executableTarget(
            name: "Checks",
            dependencies: ["Combine", "Network", "FoundationNetworkingShim", "ArtiLinux", "TLS", "FailClosedSupport"],
            swiftSettings: [.swiftLanguageMode(.v5)]),
        ]
      )

      """
  }
}
