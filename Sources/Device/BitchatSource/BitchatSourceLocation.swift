import FailClosedSupport
import Foundation

/// Where the lane's inputs are: the project's root (for BitchatShims/ and the modules the
/// shims link), the default bitchat checkout beside it, and the build cache.
public enum BitchatSourceLocation {
  /// The package root this build came from: the nearest directory above this file holding
  /// Package.swift and BitchatShims/ (found, not counted, so moving the module keeps it).
  public static var packageRoot: String {
    var url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    while url.path != "/" {
      if FileManager.default.fileExists(atPath: url.path + "/Package.swift"),
        FileManager.default.fileExists(atPath: url.path + "/BitchatShims")
      {
        return url.path
      }
      url.deleteLastPathComponent()
    }
    return URL(fileURLWithPath: #filePath).deletingLastPathComponent().path
  }

  /// $FAILCLOSED_BITCHAT_SRC when set (another checkout, or none: the tests of a fresh clone),
  /// else `../shared/upstream/bitchat` relative to the package root.
  public static var defaultCheckout: String {
    if let explicit = ProcessInfo.processInfo.environment["FAILCLOSED_BITCHAT_SRC"],
      !explicit.isEmpty
    {
      return explicit
    }
    return
      ((packageRoot as NSString).appendingPathComponent("../shared/upstream/bitchat")
      as NSString).standardizingPath
  }

  /// $FAILCLOSED_CACHE, else $XDG_CACHE_HOME/failclosed, else ~/.cache/failclosed; then
  /// /bitchat-source.
  public static var cacheRoot: String { UserCacheDirectory.root() + "/bitchat-source" }

  /// Finds the tree, generates and builds the package (or reuses it); the driver's path.
  public static func prepare(
    bitchatSource: String?, cacheRoot: String? = nil, progress: @Sendable (String) -> Void
  ) throws -> BitchatSourceBuilder.Result {
    let tree = try BitchatTree(root: bitchatSource ?? defaultCheckout)
    let package = try BitchatSourcePackage(
      tree: tree, packageRoot: packageRoot, cacheRoot: cacheRoot ?? self.cacheRoot)
    return try BitchatSourceBuilder(package: package).build(progress: progress)
  }
}
