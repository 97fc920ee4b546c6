import Foundation

/// Every Swift source of a bitchat checkout, by module, with its outline: the app's files
/// (bitchat/) as the module `BitchatApp`, and each target of each local package
/// (localPackages/*/Package.swift: BitLogger, BitFoundation, Tor...) under its own target name,
/// read from the checkout's own manifests, so a package bitchat adds later is found the same way.
public struct BitchatCheckoutIndex: Sendable {
  public struct SourceFile: Sendable, Hashable {
    /// Path relative to the checkout.
    public let relativePath: String
    /// The module it compiles into: `BitchatApp` or a local package's target.
    public let module: String
    public let outline: SwiftSourceOutline
    public var name: String { (relativePath as NSString).lastPathComponent }
  }

  public static let appModule = "BitchatApp"
  static let appDirectory = "bitchat"
  static let packagesDirectory = "localPackages"

  public let root: String
  /// By relative path.
  public let files: [String: SourceFile]
  /// Module name -> its files' relative paths, sorted.
  public let modules: [String: [String]]
  /// Declared name -> the files that declare it at top level or in an extension.
  let declarers: [String: [String]]

  /// `fallback`: files to index under the given module when no manifest names them (a
  /// checkout whose local package has no Package.swift: the module the lane knows it by).
  public init(root: String, fallback: [(path: String, module: String)] = []) {
    self.root = root
    var files: [String: SourceFile] = [:]
    var modules: [String: [String]] = [:]
    func add(_ relativePath: String, module: String) {
      guard files[relativePath] == nil,
        let source = try? String(contentsOfFile: root + "/" + relativePath, encoding: .utf8)
      else { return }
      files[relativePath] = SourceFile(
        relativePath: relativePath, module: module, outline: SwiftSourceOutline(source: source))
      modules[module, default: []].append(relativePath)
    }
    for path in Self.swiftFiles(under: root + "/" + Self.appDirectory) {
      add(Self.appDirectory + "/" + path, module: Self.appModule)
    }
    for target in Self.packageTargets(root: root) {
      for path in target.files { add(path, module: target.name) }
    }
    for (path, module) in fallback { add(path, module: module) }
    var declarers: [String: [String]] = [:]
    for file in files.values {
      for name in file.outline.declaredNames {
        declarers[name, default: []].append(file.relativePath)
      }
    }
    self.files = files
    self.modules = modules.mapValues { $0.sorted() }
    self.declarers = declarers.mapValues { $0.sorted() }
  }

  /// The files that declare `name` (a type, a top-level value or an extension member).
  public func declaringFiles(of name: String) -> [SourceFile] {
    (declarers[name] ?? []).compactMap { files[$0] }
  }

  /// The local modules, by name.
  public var localModules: Set<String> { Set(modules.keys).subtracting([Self.appModule]) }

  /// One library target of a local package: its name and its Swift files (relative paths).
  struct PackageTarget {
    let name: String
    let files: [String]
  }

  /// The library targets of every local package, as its Package.swift declares them (`name:`,
  /// `path:`, `sources:`, `exclude:`); test, binary and plugin targets are not code the app runs.
  static func packageTargets(root: String) -> [PackageTarget] {
    let packages = root + "/" + packagesDirectory
    let names = (try? FileManager.default.contentsOfDirectory(atPath: packages)) ?? []
    var targets: [PackageTarget] = []
    for package in names.sorted() {
      let manifestPath = packages + "/" + package + "/Package.swift"
      guard let manifest = try? String(contentsOfFile: manifestPath, encoding: .utf8) else {
        continue
      }
      for body in targetBodies(in: manifest) {
        guard let name = firstString(after: "name:", in: body) else { continue }
        let path = firstString(after: "path:", in: body) ?? "Sources/" + name
        let base = packagesDirectory + "/" + package + "/" + path
        let excluded = strings(inList: "exclude:", of: body)
        var files = swiftFiles(under: root + "/" + base).filter { file in
          !excluded.contains { file == $0 || file.hasPrefix($0 + "/") }
        }
        let listed = strings(inList: "sources:", of: body)
        if !listed.isEmpty {
          files = files.filter { file in listed.contains { file == $0 || file.hasPrefix($0 + "/") }
          }
        }
        targets.append(PackageTarget(name: name, files: files.map { base + "/" + $0 }))
      }
    }
    return targets
  }

  /// The argument lists of `.target(` calls (not `.testTarget(`, `.binaryTarget(`).
  static func targetBodies(in manifest: String) -> [String] {
    var bodies: [String] = []
    var rest = Substring(manifest)
    while let range = rest.range(of: ".target(") {
      var depth = 1
      var cursor = range.upperBound
      while cursor < rest.endIndex, depth > 0 {
        if rest[cursor] == "(" { depth += 1 }
        if rest[cursor] == ")" { depth -= 1 }
        cursor = rest.index(after: cursor)
      }
      bodies.append(String(rest[range.upperBound..<cursor]))
      rest = rest[cursor...]
    }
    return bodies
  }

  static func firstString(after label: String, in body: String) -> String? {
    guard let at = body.range(of: label) else { return nil }
    let tail = body[at.upperBound...].drop { $0 == " " || $0 == "\n" || $0 == "\t" }
    guard tail.first == "\"" else { return nil }
    return String(tail.dropFirst().prefix { $0 != "\"" })
  }

  static func strings(inList label: String, of body: String) -> [String] {
    guard let at = body.range(of: label), let open = body[at.upperBound...].firstIndex(of: "["),
      let close = body[open...].firstIndex(of: "]")
    else { return [] }
    return body[open..<close].split(separator: "\"", omittingEmptySubsequences: false).enumerated()
      .filter { $0.offset % 2 == 1 }.map { String($0.element) }
  }

  /// Swift files under a directory, relative to it, sorted.
  static func swiftFiles(under directory: String) -> [String] {
    guard let enumerator = FileManager.default.enumerator(atPath: directory) else { return [] }
    var paths: [String] = []
    while let path = enumerator.nextObject() as? String {
      if path.hasSuffix(".swift") { paths.append(path) }
    }
    return paths.sorted()
  }
}
