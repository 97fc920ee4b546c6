import Foundation

/// bitchat's Tor-layer files in a checkout, found by path (never by hash or line): which
/// target of the generated package each goes to, and which may be missing.
public struct BitchatTree: Sendable {
  /// One file the lane compiles.
  public struct File: Sendable, Hashable {
    /// Path relative to the checkout, e.g. `localPackages/Arti/Sources/TorManager.swift`.
    public let relativePath: String
    /// The generated package's target: BitLogger, Tor or BitchatApp.
    public let target: String
    public var name: String { (relativePath as NSString).lastPathComponent }
  }

  /// What the lane needs: (path, target, required). BitLogger's directory is taken whole.
  static let expected: [(path: String, target: String, required: Bool)] = [
    ("localPackages/Arti/Sources/TorManager.swift", "Tor", true),
    ("localPackages/Arti/Sources/TorURLSession.swift", "Tor", true),
    ("localPackages/Arti/Sources/TorNotifications.swift", "Tor", true),
    ("bitchat/Services/NetworkActivationService.swift", "BitchatApp", true),
    ("bitchat/Services/NetworkReachabilityMonitor.swift", "BitchatApp", false),
    ("bitchat/Services/TransportConfig.swift", "BitchatApp", true),
    ("bitchat/Nostr/GeoRelayDirectory.swift", "BitchatApp", true),
    ("bitchat/Nostr/NostrRelayManager.swift", "BitchatApp", true),
    ("bitchat/Nostr/NostrRelaySettings.swift", "BitchatApp", false),
    ("bitchat/Nostr/NostrRelayURL.swift", "BitchatApp", false),
    ("bitchat/Protocols/Geohash.swift", "BitchatApp", true),
  ]
  static let loggerDirectory = "localPackages/BitLogger/Sources"

  public let root: String
  public let files: [File]
  /// Optional files this checkout does not have (older commits).
  public let absentOptional: [String]

  /// Finds the files under `root`; throws naming the first required file that is missing.
  public init(root: String) throws(BitchatSourceError) {
    let manager = FileManager.default
    var isDirectory: ObjCBool = false
    guard manager.fileExists(atPath: root, isDirectory: &isDirectory), isDirectory.boolValue else {
      throw .noCheckout(root)
    }
    self.root = (root as NSString).standardizingPath
    var files: [File] = []
    var absent: [String] = []
    let loggerPath = root + "/" + Self.loggerDirectory
    guard
      let logger = try? manager.contentsOfDirectory(atPath: loggerPath).filter({
        $0.hasSuffix(".swift")
      }), !logger.isEmpty
    else { throw .missingFile(root: root, path: Self.loggerDirectory + "/*.swift") }
    for name in logger.sorted() {
      files.append(File(relativePath: Self.loggerDirectory + "/" + name, target: "BitLogger"))
    }
    for entry in Self.expected {
      if manager.isReadableFile(atPath: root + "/" + entry.path) {
        files.append(File(relativePath: entry.path, target: entry.target))
      } else if entry.required {
        throw .missingFile(root: root, path: entry.path)
      } else {
        absent.append(entry.path)
      }
    }
    self.files = files
    absentOptional = absent
  }

  public func has(_ relativePath: String) -> Bool {
    files.contains { $0.relativePath == relativePath }
  }

  public func absolutePath(_ file: File) -> String { root + "/" + file.relativePath }
}
