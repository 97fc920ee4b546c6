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
    "CSpawn", "FailClosedSupport", "Digest", "SOCKS", "HTTPCodec", "TLS", "COpenSSL",
  ]
  /// Bumped when the generated layout changes, so old caches are not reused.
  static let layoutVersion = "5"

  public let tree: BitchatTree
  public let shimsDirectory: String
  public let projectSources: String
  public let directory: String
  public let key: String
  /// The checkout's files compiled and the stand-ins used (bitchat's own code first).
  public let closure: BitchatSourceClosure
  let extraSeeds: [BitchatSourceClosure.Seed]

  public static let executableName = "bitchat-source-driver"
  /// The shims' and arti.h's checks (BitchatShims/Checks), run by the project's tests.
  public static let checksName = "bitchat-source-checks"
  /// Where the builder keeps the checkout files that failed to compile here, with the error.
  static let feedbackName = "failed-to-compile.txt"

  /// `extraSeeds` are project files beside the driver whose needs count too (bitchat's tests).
  public init(
    tree: BitchatTree, packageRoot: String, cacheRoot: String,
    extraSeeds: [BitchatSourceClosure.Seed] = []
  ) throws(BitchatSourceError) {
    self.tree = tree
    self.extraSeeds = extraSeeds
    shimsDirectory = packageRoot + "/BitchatShims"
    projectSources = packageRoot + "/Sources"
    guard FileManager.default.fileExists(atPath: shimsDirectory + "/Combine") else {
      throw .noShims(shimsDirectory)
    }
    // The key is the first resolution's; what the build finds later is kept in the directory.
    let first = Self.closure(tree: tree, shims: shimsDirectory, extraSeeds: extraSeeds)
    key = Self.key(
      closure: first, root: tree.root, shims: shimsDirectory, projectSources: projectSources)
    directory = cacheRoot + "/" + key
    let feedback = Self.readFeedback(directory + "/" + Self.feedbackName)
    closure = Self.closure(
      tree: tree, shims: shimsDirectory, extraSeeds: extraSeeds, failedToCompile: feedback)
  }

  /// What the lane compiles of a checkout: the Tor layer, the driver and `extraSeeds`, with
  /// what they need.
  static func closure(
    tree: BitchatTree, shims: String, extraSeeds: [BitchatSourceClosure.Seed],
    failedToCompile: [String: String] = [:]
  ) -> BitchatSourceClosure {
    let index = BitchatCheckoutIndex(
      root: tree.root, fallback: tree.files.map { ($0.relativePath, $0.target) })
    return BitchatSourceClosure(
      index: index, seeds: seeds(tree: tree, index: index, shims: shims) + extraSeeds,
      standIns: standIns(shims: shims), failedToCompile: failedToCompile)
  }

  /// The key of a checkout's lane package (before any build's feedback).
  static func key(tree: BitchatTree, shims: String, projectSources: String) -> String {
    key(
      closure: closure(tree: tree, shims: shims, extraSeeds: []), root: tree.root, shims: shims,
      projectSources: projectSources)
  }

  /// The same package with the checkout files that failed to compile left out.
  func excluding(_ failed: [String: String]) throws -> BitchatSourcePackage {
    var all = Self.readFeedback(directory + "/" + Self.feedbackName)
    for (path, reason) in failed { all[path] = reason }
    let text = all.sorted { $0.key < $1.key }.map { "\($0.key)\t\($0.value)" }.joined(
      separator: "\n")
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    try (text + "\n").write(
      toFile: directory + "/" + Self.feedbackName, atomically: true, encoding: .utf8)
    return try BitchatSourcePackage(
      tree: tree, packageRoot: (shimsDirectory as NSString).deletingLastPathComponent,
      cacheRoot: (directory as NSString).deletingLastPathComponent, extraSeeds: extraSeeds)
  }

  static func readFeedback(_ path: String) -> [String: String] {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [:] }
    var entries: [String: String] = [:]
    for line in text.split(separator: "\n") {
      let parts = line.split(separator: "\t", maxSplits: 1)
      if parts.count == 2 { entries[String(parts[0])] = String(parts[1]) }
    }
    return entries
  }

  /// The Tor layer's files and the driver's: what the lane compiles whatever else it needs.
  static func seeds(tree: BitchatTree, index: BitchatCheckoutIndex, shims: String)
    -> [BitchatSourceClosure.Seed]
  {
    var seeds: [BitchatSourceClosure.Seed] = []
    for file in tree.files {
      let module = index.files[file.relativePath]?.module ?? file.target
      let outline = index.files[file.relativePath]?.outline ?? SwiftSourceOutline()
      seeds.append(
        .init(name: file.name, module: module, outline: outline, relativePath: file.relativePath))
    }
    for path in files(under: shims + "/Driver") {
      let source = (try? String(contentsOfFile: shims + "/Driver/" + path, encoding: .utf8)) ?? ""
      seeds.append(
        .init(
          name: "Driver/" + path, module: BitchatCheckoutIndex.appModule,
          outline: SwiftSourceOutline(source: source), relativePath: nil))
    }
    return seeds
  }

  /// BitchatShims/AppStandIns, file by file.
  static func standIns(shims: String) -> [BitchatSourceClosure.StandIn] {
    files(under: shims + "/AppStandIns").map { path in
      let source =
        (try? String(contentsOfFile: shims + "/AppStandIns/" + path, encoding: .utf8)) ?? ""
      return .init(name: path, outline: SwiftSourceOutline(source: source))
    }
  }

  /// SHA-256 over every checkout file compiled (path and bytes), every shim file and every file
  /// of the project modules linked in (a change to the transport's SOCKS or TLS code must
  /// rebuild the driver, or the lane would test stale code), first 16 hex digits.
  static func key(
    closure: BitchatSourceClosure, root: String, shims: String, projectSources: String
  ) -> String {
    var material: [UInt8] = Array("layout \(layoutVersion)\n".utf8)
    for file in closure.files {
      material += Array("bitchat \(file.module) \(file.relativePath)\n".utf8)
      material += SHA256.hash(
        Array(
          (try? Data(contentsOf: URL(fileURLWithPath: root + "/" + file.relativePath))) ?? Data()))
    }
    material += Array("stand-ins \(closure.standIns.joined(separator: " "))\n".utf8)
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
    for file in closure.files {
      map[directory + "/Sources/\(file.module)/\(file.relativePath)"] = file.relativePath
    }
    return map
  }

  /// Whether the generated links lead to this package's checkout (not to another checkout
  /// with the same files, which wrote them first).
  var linksPointAtItsCheckout: Bool {
    linkMap.allSatisfy { link, relative in
      (try? FileManager.default.destinationOfSymbolicLink(atPath: link))
        == tree.root + "/" + relative
    }
  }

  /// Generated path -> the checkout file it links, for every compiled file (the builder's
  /// feedback: a file of the checkout that failed to compile here).
  var checkoutFiles: [String: BitchatCheckoutIndex.SourceFile] {
    var map: [String: BitchatCheckoutIndex.SourceFile] = [:]
    for file in closure.files {
      map[directory + "/Sources/\(file.module)/\(file.relativePath)"] = file
    }
    return map
  }

  /// The checkout's local modules the package builds: those with a compiled file, and those a
  /// compiled file imports (an empty module then, as `import` needs one).
  var localModules: [String] {
    var modules = Set(closure.files.map(\.module))
    for file in closure.files {
      modules.formUnion(
        file.outline.imports.union(file.outline.conditionalImports).intersection(
          closure.index.localModules))
    }
    modules.remove(BitchatCheckoutIndex.appModule)
    return modules.sorted()
  }

  /// The local modules `module`'s compiled files import.
  func imports(of module: String) -> [String] {
    var imported = Set<String>()
    for file in closure.files where file.module == module {
      imported.formUnion(
        file.outline.imports.union(file.outline.conditionalImports).intersection(localModules))
    }
    imported.remove(module)
    return imported.sorted()
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
    for module in localModules + [BitchatCheckoutIndex.appModule] {
      try manager.createDirectory(atPath: sources + "/" + module, withIntermediateDirectories: true)
      // Every file of the checkout's module that imports a local module makes its extension
      // members visible to the whole module (Swift 5 mode); the app's build has such files, so
      // the lane's module says the same.
      let imported = (closure.moduleImportsOfCheckout[module] ?? []).intersection(localModules)
        .subtracting([module]).sorted()
      let text =
        "// Generated: the local modules \(module)'s files import somewhere in the checkout.\n"
        + imported.map { "import \($0)\n" }.joined()
      try text.write(
        toFile: sources + "/" + module + "/ModuleImports.swift", atomically: true, encoding: .utf8)
    }
    for file in closure.files {
      let path = sources + "/\(file.module)/\(file.relativePath)"
      try manager.createDirectory(
        atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
      try manager.createSymbolicLink(
        atPath: path, withDestinationPath: tree.root + "/" + file.relativePath)
    }
    try writeAppShims(into: sources + "/" + BitchatCheckoutIndex.appModule, driver: true)
    try manifest().write(toFile: directory + "/Package.swift", atomically: true, encoding: .utf8)
  }

  /// The app module's share of the project: the stand-ins the closure kept and, for the lane,
  /// the driver (in the same module, as AppRuntime is in the app, so it reaches the internal
  /// types the way the app does).
  func writeAppShims(into folder: String, driver: Bool) throws {
    let manager = FileManager.default
    for name in closure.standIns {
      try manager.createSymbolicLink(
        atPath: folder + "/AppStandIns-" + (name as NSString).lastPathComponent,
        withDestinationPath: shimsDirectory + "/AppStandIns/" + name)
    }
    guard driver else { return }
    for path in Self.files(under: shimsDirectory + "/Driver") {
      let name = (path as NSString).lastPathComponent
      try manager.createSymbolicLink(
        atPath: folder + "/" + (name == "main.swift" ? name : "Driver-\(name)"),
        withDestinationPath: shimsDirectory + "/Driver/" + path)
    }
  }

  /// The compiler flags that say which of bitchat's declarations the driver may use.
  var featureDefines: [String] { BitchatDriverFeatures.flags(in: closure.index) }

  /// Package.swift: Swift 5 mode and -D DEBUG for bitchat's files as the app builds them; the
  /// FoundationNetworking shim imported into every bitchat file (Apple's Foundation brings
  /// URLSession and Combine's ObservableObject; Linux's does not).
  func manifest() -> String {
    let defines = [#".define("DEBUG")"#] + featureDefines.map { #".define("\#($0)")"# }
    let shims = #""Combine", "Network", "FoundationNetworkingShim", "ArtiLinux""#
    let local = localModules.map { module in
      let dependencies = imports(of: module).map { #""\#($0)""# }.joined(separator: ", ")
      return #"""
            .target(
              name: "\#(module)", dependencies: [\#(shims)\#(dependencies.isEmpty ? "" : ", " + dependencies)],
              swiftSettings: bitchat),
        """#
    }.joined(separator: "\n")
    let appDependencies = (localModules.map { #""\#($0)""# } + [shims]).joined(separator: ", ")
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
          .target(name: "CSpawn"),
          .target(name: "FailClosedSupport", dependencies: ["CSpawn"]),
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
      \(local)
          .executableTarget(
            name: "BitchatApp", dependencies: [\(appDependencies)], swiftSettings: bitchat),
          .executableTarget(
            name: "Checks",
            dependencies: ["Combine", "Network", "FoundationNetworkingShim", "ArtiLinux", "TLS", "FailClosedSupport"],
            swiftSettings: [.swiftLanguageMode(.v5)]),
        ]
      )

      """
  }
}
