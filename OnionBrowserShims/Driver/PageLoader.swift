import Foundation
import FoundationNetworkingShim

/// A page load as the browser's web view makes it through tor's SOCKS port: the project's
/// URLSession with Apple's proxy semantics (BitchatShims/FoundationNetworkingShim: SOCKS5 with
/// the host name sent to the proxy, TLS with certificate checks), which records the request's
/// start, done or failure. The web view itself (UIWebView in 2.X, WKWebView with iOS 17's
/// proxyConfigurations in 3.X) does not exist here.
final class PageLoader: @unchecked Sendable {
  /// WKWebView's default timeout.
  static let timeout: TimeInterval = 60

  func load(_ url: String, socksHost: String, socksPort: Int) {
    guard let target = URL(string: url) else { return }
    let configuration = FoundationNetworkingShim.URLSessionConfiguration.ephemeral
    configuration.connectionProxyDictionary = [
      "SOCKSEnable": 1, "SOCKSProxy": socksHost, "SOCKSPort": socksPort,
    ]
    configuration.timeoutIntervalForRequest = Self.timeout
    let session = FoundationNetworkingShim.URLSession(configuration: configuration)
    var request = URLRequest(url: target)
    request.timeoutInterval = Self.timeout
    Task.detached {
      _ = try? await session.data(for: request)
    }
  }
}
