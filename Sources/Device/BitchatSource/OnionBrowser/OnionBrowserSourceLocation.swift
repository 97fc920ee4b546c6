import FailClosedSupport
import Foundation

/// Where the onion-browser-source lane's checkout comes from: a directory laid out like an
/// Onion Browser checkout, or `REPO@COMMIT` (a clone, bare or not, and a commit of it), which
/// is exported with `git archive` (the app's Swift files only) into the cache, or `pinned:2.X`
/// / `pinned:3.X`: the commit baselines/onion-browser-commits.json pins, from the clone at
/// $FAILCLOSED_ONION_BROWSER_REPO.
public enum OnionBrowserSourceLocation {
  /// $FAILCLOSED_CACHE... /onion-browser-source.
  public static var cacheRoot: String { UserCacheDirectory.root() + "/onion-browser-source" }

  /// The clone `pinned:` exports from: $FAILCLOSED_ONION_BROWSER_REPO.
  public static var pinnedRepository: String? {
    let value = ProcessInfo.processInfo.environment["FAILCLOSED_ONION_BROWSER_REPO"] ?? ""
    return value.isEmpty ? nil : value
  }

  /// The pins file.
  public static var pinsPath: String {
    BitchatSourceLocation.packageRoot + "/baselines/onion-browser-commits.json"
  }

  /// The commit pinned for a branch ("2.X", "3.X").
  public static func pinnedCommit(_ branch: String) throws(OnionBrowserSourceError) -> String {
    guard let data = FileManager.default.contents(atPath: pinsPath),
      let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
      let commits = object["commits"] as? [[String: Any]],
      let commit = commits.first(where: { ($0["branch"] as? String) == branch })?["commit"]
        as? String
    else { throw .export("\(pinsPath): no commit pinned for \(branch)") }
    return commit
  }

  /// A checkout directory for `source`.
  public static func checkout(_ source: String, cacheRoot: String? = nil)
    throws(OnionBrowserSourceError) -> String
  {
    if source.hasPrefix("pinned:") {
      guard let repository = pinnedRepository else {
        throw .export(
          "\(source) needs FAILCLOSED_ONION_BROWSER_REPO (a clone of OnionBrowser/OnionBrowser)")
      }
      return try export(
        repository: repository, commit: try pinnedCommit(String(source.dropFirst(7))),
        cacheRoot: cacheRoot ?? self.cacheRoot)
    }
    if let at = source.lastIndex(of: "@"), !FileManager.default.fileExists(atPath: source) {
      return try export(
        repository: String(source[..<at]), commit: String(source[source.index(after: at)...]),
        cacheRoot: cacheRoot ?? self.cacheRoot)
    }
    return source
  }

  /// `git archive COMMIT OnionBrowser/` of `repository` into `<cache>/checkouts/<commit>`,
  /// once per commit.
  static func export(repository: String, commit: String, cacheRoot: String)
    throws(OnionBrowserSourceError) -> String
  {
    guard commit.allSatisfy({ $0.isHexDigit }), commit.count >= 7 else {
      throw .export("'\(commit)' is not a commit hash")
    }
    let target = cacheRoot + "/checkouts/" + commit
    if FileManager.default.fileExists(atPath: target + "/.exported") { return target }
    do {
      try? FileManager.default.removeItem(atPath: target)
      try FileManager.default.createDirectory(atPath: target, withIntermediateDirectories: true)
      let script =
        "git -C \"$1\" archive --format=tar \"$2\" OnionBrowser | tar -x -C \"$3\" "
        + "--wildcards '*.swift'"
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/bin/sh")
      process.arguments = ["-c", script, "sh", repository, commit, target]
      let errors = Pipe()
      process.standardError = errors
      try process.run()
      let text = String(
        decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      process.waitUntilExit()
      guard process.terminationStatus == 0 else {
        throw OnionBrowserSourceError.export("git archive \(commit) of \(repository): \(text)")
      }
      guard
        FileManager.default.createFile(atPath: target + "/.exported", contents: Data(commit.utf8))
      else { throw OnionBrowserSourceError.export("could not write \(target)/.exported") }
      return target
    } catch let error as OnionBrowserSourceError {
      throw error
    } catch {
      throw .export("\(error)")
    }
  }

  /// Finds the tree, generates and builds the package (or reuses it).
  public static func prepare(
    onionBrowserSource: String, cacheRoot: String? = nil, progress: @Sendable (String) -> Void
  ) throws -> OnionBrowserSourceBuilder.Result {
    let tree = try OnionBrowserTree(root: try checkout(onionBrowserSource, cacheRoot: cacheRoot))
    let package = try OnionBrowserSourcePackage(
      tree: tree, packageRoot: BitchatSourceLocation.packageRoot,
      cacheRoot: (cacheRoot ?? self.cacheRoot) + "/packages")
    return try OnionBrowserSourceBuilder(package: package).build(progress: progress)
  }
}
