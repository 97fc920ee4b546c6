import Foundation

/// Stands in for Onion Browser's OnionBrowser/Helpers/URL+Helpers.swift (2.X @9a17dd4f and 3.X
/// @44edf9a8 alike), which cannot compile here: its `@objc extension NSURL` (l.84-90) needs
/// Objective-C interoperability, which Swift on Linux lacks. The driver uses one member of it,
/// `withFixedScheme` (l.25-42): onionhttp and onionhttps (any case) become http and https, any
/// other URL is kept.
extension URL {
  var withFixedScheme: URL? {
    switch scheme?.lowercased() {
    case "onionhttp":
      var urlc = URLComponents(url: self, resolvingAgainstBaseURL: true)
      urlc?.scheme = "http"
      return urlc?.url
    case "onionhttps":
      var urlc = URLComponents(url: self, resolvingAgainstBaseURL: true)
      urlc?.scheme = "https"
      return urlc?.url
    default:
      return self
    }
  }
}
