import Foundation
import IPtProxyUI

/// Stands in for Onion Browser 2.X's OnionBrowser/Settings/Settings.swift (@9a17dd4f), which
/// imports UIKit (and needs the app's search engines, tab security and Security's SSLProtocol):
/// the members OnionManager.swift and the driver use, with the same UserDefaults keys.
class Settings: NSObject {
  /// l.142-167: Onion Browser's stored bridge numbers to IPtProxyUI's Transport.
  private static let transportTranslationTable = [0: 0, 1: 1, 2: 0, 3: 0, 4: 2, 5: 4, 99: 3]

  /// l.206-223.
  class var transport: Transport {
    get {
      let obRaw = UserDefaults.standard.integer(forKey: "use_bridges")
      guard let iptRaw = transportTranslationTable[obRaw] else { return .none }
      return Transport(rawValue: iptRaw) ?? .none
    }
    set {
      let iptRaw = newValue.rawValue
      let obRaw = transportTranslationTable.first(where: { $0.value == iptRaw })?.key ?? 0
      UserDefaults.standard.set(obRaw, forKey: "use_bridges")
    }
  }

  /// l.225-232.
  class var customBridges: [String]? {
    get { UserDefaults.standard.stringArray(forKey: "custom_bridges") }
    set { UserDefaults.standard.set(newValue, forKey: "custom_bridges") }
  }

  /// l.429-436.
  class var advancedTorConf: [String]? {
    get { UserDefaults.standard.stringArray(forKey: "advanced_tor_conf") }
    set { UserDefaults.standard.set(newValue, forKey: "advanced_tor_conf") }
  }

  /// l.438-449.
  class var openNewUrlOnStart: URL? {
    get {
      if let url = UserDefaults.standard.string(forKey: "open_new_url_on_start") {
        return URL(string: url)
      }
      return nil
    }
    set { UserDefaults.standard.set(newValue?.absoluteString, forKey: "open_new_url_on_start") }
  }
}
