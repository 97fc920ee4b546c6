import Foundation
import FoundationNetworking

/// Apple's URLSessionConfiguration, as far as bitchat uses it: `waitsForConnectivity` is
/// assignable (get-only in swift-corelibs) and `connectionProxyDictionary` is honoured by the
/// `apple` transport (swift-corelibs ignores it).
open class URLSessionConfiguration: @unchecked Sendable {
  public enum Kind: Sendable { case `default`, ephemeral }
  public let kind: Kind
  open var waitsForConnectivity = false
  open var connectionProxyDictionary: [AnyHashable: Any]?
  open var timeoutIntervalForRequest: TimeInterval = 60
  open var timeoutIntervalForResource: TimeInterval = 604_800
  open var httpAdditionalHeaders: [AnyHashable: Any]?
  open var requestCachePolicy: URLRequest.CachePolicy = .useProtocolCachePolicy

  init(kind: Kind) { self.kind = kind }

  open class var `default`: URLSessionConfiguration { URLSessionConfiguration(kind: .default) }
  open class var ephemeral: URLSessionConfiguration { URLSessionConfiguration(kind: .ephemeral) }

  /// The SOCKS proxy Apple's CFNetwork would use: SOCKSEnable non-zero, SOCKSProxy and
  /// SOCKSPort set (kCFNetworkProxiesSOCKS* keys, spelled "SOCKSEnable"... on iOS).
  public var socksProxy: (host: String, port: UInt16)? {
    guard let dictionary = connectionProxyDictionary else { return nil }
    func value(_ key: String) -> Any? { dictionary[AnyHashable(key)] }
    let enabled =
      (value("SOCKSEnable") as? Int).map { $0 != 0 } ?? (value("SOCKSEnable") as? Bool ?? false)
    guard enabled, let host = value("SOCKSProxy") as? String else { return nil }
    let port = (value("SOCKSPort") as? Int) ?? 1080
    guard let port16 = UInt16(exactly: port) else { return nil }
    return (host, port16)
  }

  /// The same settings on a stock swift-corelibs configuration (the linux-foundation
  /// transport): the proxy dictionary is copied and, as on Linux, ignored.
  func foundationConfiguration() -> FoundationNetworking.URLSessionConfiguration {
    let configuration: FoundationNetworking.URLSessionConfiguration =
      kind == .ephemeral ? .ephemeral : .default
    configuration.connectionProxyDictionary = connectionProxyDictionary
    configuration.timeoutIntervalForRequest = timeoutIntervalForRequest
    configuration.timeoutIntervalForResource = timeoutIntervalForResource
    configuration.requestCachePolicy = requestCachePolicy
    return configuration
  }
}
