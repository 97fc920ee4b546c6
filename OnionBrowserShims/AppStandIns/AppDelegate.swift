/// Stands in for Onion Browser 2.X's OnionBrowser/AppDelegate.swift (@9a17dd4f), which imports
/// UIKit (and needs the whole browser UI) and so cannot compile here. OnionManager.swift reads
/// one member of it: `AppDelegate.socksProxyPort` (AppDelegate.swift l.19, 39050). What the
/// app delegate does with URLs and the lifecycle is the driver's (docs/onion-browser-source.md).
class AppDelegate {
  static let socksProxyPort = 39050
}
