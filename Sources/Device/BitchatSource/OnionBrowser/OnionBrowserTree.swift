import Foundation

/// An Onion Browser checkout as the onion-browser-source lane reads it: the Tor layer on
/// Tor.framework (2.X: OnionBrowser/OnionManager.swift; 3.X: OnionBrowser/TorManager.swift,
/// whichever runs tor with TorThread) and, where the commit has it, the helper of the app it
/// needs, Onion Browser's own FileManager+Helpers.swift (tor's data directory). URL+Helpers.swift (withFixedScheme) cannot
/// compile here (`@objc extension NSURL`, l.84): a stand-in has its one member the driver
/// uses. Found by path, never by hash or line.
public struct OnionBrowserTree: Sendable, Equatable {
  public enum Version: String, Sendable, Equatable {
    /// 2.X: OnionManager.swift, the scenarios of the onion-browser-2 profile.
    case v2 = "2"
    /// 3.X: TorManager.swift, the scenarios of onion-browser-3.
    case v3 = "3"

    /// The compiler flag the driver reads (OnionBrowserShims/Driver).
    public var driverFlag: String { self == .v2 ? "ONION_MANAGER" : "TOR_MANAGER" }
    /// The model's profile of this version.
    public var profileName: String { "onion-browser-" + rawValue }
  }

  public let root: String
  public let version: Version
  /// The Tor layer's path in the checkout.
  public let torLayer: String
  /// Every file of the checkout compiled, its path in the checkout.
  public let files: [String]

  static let torManager = "OnionBrowser/TorManager.swift"
  static let onionManager = "OnionBrowser/OnionManager.swift"
  static let helpers = ["OnionBrowser/Helpers/FileManager+Helpers.swift"]

  public init(root given: String) throws(OnionBrowserSourceError) {
    // Absolute: the package's links must lead to the checkout from anywhere.
    let root = URL(fileURLWithPath: given).standardizedFileURL.path
    let manager = FileManager.default
    var isDirectory: ObjCBool = false
    guard manager.fileExists(atPath: root, isDirectory: &isDirectory), isDirectory.boolValue
    else { throw .noCheckout(root) }
    func runsTor(_ path: String) -> Bool {
      guard let text = try? String(contentsOfFile: root + "/" + path, encoding: .utf8) else {
        return false
      }
      return text.contains("TorThread(")
    }
    if runsTor(Self.torManager) {
      version = .v3
      torLayer = Self.torManager
    } else if runsTor(Self.onionManager) {
      version = .v2
      torLayer = Self.onionManager
    } else {
      throw .noTorLayer(root)
    }
    self.root = root
    // Optional: older commits keep tor's directory elsewhere; what the Tor layer then lacks
    // the build names (OnionBrowserDiagnostics).
    files = [torLayer] + Self.helpers.filter { manager.fileExists(atPath: root + "/" + $0) }
  }
}
