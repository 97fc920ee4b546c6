import Digest
import Foundation

/// The SwiftPM package the onion-browser-source lane generates (docs/onion-browser-source.md):
/// Onion Browser's own files compiled in place (symbolic links to the checkout, never copies)
/// in the module `OnionBrowserApp` with the stand-ins and the driver, against the shims of
/// OnionBrowserShims/ (Tor, IPtProxyUI, NetworkExtension) and those bitchat's lane already has
/// (BitchatShims/: Network, Combine, FoundationNetworkingShim; arti.h's pinning of Debian's
/// tor). Keyed like BitchatSourcePackage: by the hashes of every input file.
public struct OnionBrowserSourcePackage: Sendable {
  public static let executableName = "onion-browser-source-driver"
  static let layoutVersion = "2"
  /// Project modules the FoundationNetworking shim links (SOCKS, TLS, HTTP).
  static let projectModules = BitchatSourcePackage.projectModules
  /// BitchatShims/ modules reused as they are.
  static let bitchatShimModules = ["Combine", "Network", "FoundationNetworkingShim"]
  /// BitchatShims/ files reused one by one: the event stream, and the base torrc's pinning.
  static let bitchatShimFiles = [
    "Driver": ["Driver/EventStream.swift"],
    "Tor": ["ArtiLinux/DebianTorArtiConfiguration.swift"],
  ]
  /// OnionBrowserShims/ modules: each a module of the package.
  static let shimModules = ["Tor", "IPtProxyUI", "NetworkExtension"]

  public let tree: OnionBrowserTree
  public let shimsDirectory: String
  public let bitchatShims: String
  public let projectSources: String
  public let directory: String
  public let key: String
  /// AppStandIns/ files in use, with the file of Onion Browser each replaces.
  public let standIns: [String]

  public init(tree: OnionBrowserTree, packageRoot: String, cacheRoot: String)
    throws(OnionBrowserSourceError)
  {
    self.tree = tree
    shimsDirectory = packageRoot + "/OnionBrowserShims"
    bitchatShims = packageRoot + "/BitchatShims"
    projectSources = packageRoot + "/Sources"
    guard FileManager.default.fileExists(atPath: shimsDirectory + "/Tor") else {
      throw .noShims(shimsDirectory)
    }
    standIns = Self.standIns(for: tree)
    key = Self.key(
      tree: tree, standIns: standIns, shims: shimsDirectory, bitchatShims: bitchatShims,
      projectSources: projectSources)
    directory = cacheRoot + "/" + key
  }

  /// The stand-ins a tree needs: 2.X's own Settings class and AppDelegate.socksProxyPort;
  /// 3.X's Settings subclass of IPtProxyUI's.
  static func standIns(for tree: OnionBrowserTree) -> [String] {
    switch tree.version {
    case .v2:
      return [
        "AppDelegate.swift", "OnionManagerSettings.swift", "URLWithFixedScheme.swift",
        "ThreadShadow.swift",
      ]
    case .v3: return ["TorManagerSettings.swift", "URLWithFixedScheme.swift", "ThreadShadow.swift"]
    }
  }

  static func key(
    tree: OnionBrowserTree, standIns: [String], shims: String, bitchatShims: String,
    projectSources: String
  ) -> String {
    var material: [UInt8] = Array("layout \(layoutVersion) \(tree.version.rawValue)\n".utf8)
    func add(_ label: String, _ path: String) {
      material += Array("\(label)\n".utf8)
      material += SHA256.hash(
        Array((try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()))
    }
    for file in tree.files { add("onion-browser \(file)", tree.root + "/" + file) }
    material += Array("stand-ins \(standIns.joined(separator: " "))\n".utf8)
    for path in BitchatSourcePackage.files(under: shims) { add("shim \(path)", shims + "/" + path) }
    for module in bitchatShimModules {
      for path in BitchatSourcePackage.files(under: bitchatShims + "/" + module) {
        add("bitchat-shim \(module)/\(path)", bitchatShims + "/" + module + "/" + path)
      }
    }
    for files in bitchatShimFiles.values {
      for path in files { add("bitchat-shim \(path)", bitchatShims + "/" + path) }
    }
    for module in projectModules {
      let folder = BitchatSourcePackage.moduleFolder(module, in: projectSources)
      for path in BitchatSourcePackage.files(under: folder) {
        add("project \(module)/\(path)", folder + "/" + path)
      }
    }
    return SHA256.hash(material).prefix(8).map { String(format: "%02x", $0) }.joined()
  }

  public var executablePath: String { directory + "/.build/debug/" + Self.executableName }
  var stampPath: String { directory + "/built.stamp" }

  public var isBuilt: Bool {
    FileManager.default.fileExists(atPath: stampPath)
      && FileManager.default.isExecutableFile(atPath: executablePath)
  }

  static let appModule = "OnionBrowserApp"

  /// Generated link path -> the checkout's path, for the diagnostics.
  public var linkMap: [String: String] {
    var map: [String: String] = [:]
    for file in tree.files { map[directory + "/Sources/\(Self.appModule)/\(file)"] = file }
    return map
  }

  /// Writes Package.swift and Sources/ of links. Idempotent.
  public func write() throws {
    let manager = FileManager.default
    let sources = directory + "/Sources"
    try? manager.removeItem(atPath: sources)
    try manager.createDirectory(atPath: sources, withIntermediateDirectories: true)
    func link(_ path: String, to destination: String) throws {
      try manager.createDirectory(
        atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
      try manager.createSymbolicLink(atPath: path, withDestinationPath: destination)
    }
    for module in Self.projectModules {
      try link(
        sources + "/" + module,
        to: BitchatSourcePackage.moduleFolder(module, in: projectSources))
    }
    for module in Self.bitchatShimModules {
      try link(sources + "/" + module, to: bitchatShims + "/" + module)
    }
    for module in Self.shimModules {
      let folder = sources + "/" + module
      try manager.createDirectory(atPath: folder, withIntermediateDirectories: true)
      for path in BitchatSourcePackage.files(under: shimsDirectory + "/" + module) {
        try link(folder + "/" + path, to: shimsDirectory + "/" + module + "/" + path)
      }
    }
    for path in Self.bitchatShimFiles["Tor"] ?? [] {
      try link(
        sources + "/Tor/BitchatShims-" + (path as NSString).lastPathComponent,
        to: bitchatShims + "/" + path)
    }
    let app = sources + "/" + Self.appModule
    for file in tree.files { try link(app + "/" + file, to: tree.root + "/" + file) }
    for name in standIns {
      try link(app + "/AppStandIns-" + name, to: shimsDirectory + "/AppStandIns/" + name)
    }
    for path in BitchatSourcePackage.files(under: shimsDirectory + "/Driver") {
      let name = (path as NSString).lastPathComponent
      try link(
        app + "/" + (name == "main.swift" ? name : "Driver-" + name),
        to: shimsDirectory + "/Driver/" + path)
    }
    for path in Self.bitchatShimFiles["Driver"] ?? [] {
      try link(
        app + "/BitchatShims-" + (path as NSString).lastPathComponent,
        to: bitchatShims + "/" + path)
    }
    try manifest().write(toFile: directory + "/Package.swift", atomically: true, encoding: .utf8)
  }

  /// Swift 5 mode and -D DEBUG for Onion Browser's files as the app's debug build compiles
  /// them; the driver's flag says which Tor layer it calls.
  func manifest() -> String {
    """
    // swift-tools-version:6.0
    // Generated by failclosed (onion-browser-source lane). Do not edit: regenerated from the sources.
    import PackageDescription

    let v5: [SwiftSetting] = [.swiftLanguageMode(.v5)]
    let package = Package(
      name: "OnionBrowserSource",
      products: [
        .executable(name: "\(Self.executableName)", targets: ["\(Self.appModule)"]),
      ],
      targets: [
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl"),
        .target(name: "CSpawn"),
        .target(name: "FailClosedSupport", dependencies: ["CSpawn"]),
        .target(name: "Digest"),
        .target(name: "SOCKS"),
        .target(name: "HTTPCodec", dependencies: ["Digest"]),
        .target(name: "TLS", dependencies: ["COpenSSL", "HTTPCodec", "FailClosedSupport"]),
        .target(name: "Combine", swiftSettings: v5),
        .target(name: "Network", swiftSettings: v5),
        .target(
          name: "FoundationNetworkingShim",
          dependencies: ["Combine", "TLS", "SOCKS", "HTTPCodec", "FailClosedSupport"],
          swiftSettings: v5),
        .target(name: "Tor", swiftSettings: v5),
        .target(name: "IPtProxyUI", swiftSettings: v5),
        .target(name: "NetworkExtension", swiftSettings: v5),
        .executableTarget(
          name: "\(Self.appModule)",
          dependencies: [
            "Tor", "IPtProxyUI", "NetworkExtension", "Network", "FoundationNetworkingShim", "TLS",
          ],
          swiftSettings: [
            .swiftLanguageMode(.v5), .define("DEBUG"), .define("\(tree.version.driverFlag)"),
          ]),
      ]
    )

    """
  }
}
