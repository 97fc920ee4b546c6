import Foundation

/// The rest of Tor.framework that OnionManager.swift (2.X) and TorManager.swift (3.X) name, at
/// iCepa/Tor.framework v408.10.1 (feb1942d10e97a9a4e1a6f595267ba503ed12ec7): types only, no
/// behaviour the scenarios reach.

/// TORCircuit (Tor/Classes/Core/TORCircuit.h l.17-...): the lane never lists circuits
/// (TorController.getCircuits answers none), so only its id is kept.
open class TorCircuit: NSObject {
  open var circuitId: String?
  public override init() { super.init() }
}

/// TOROnionAuth (Tor/Classes/Core/TOROnionAuth.h l.55, l.74: `init(withPrivateDir:andPublicDir:)`).
/// Onion service client authorisation; no scenario uses it.
open class TorOnionAuth: NSObject {
  public let privateUrl: URL?
  public let publicUrl: URL?

  public init(withPrivateDir privateUrl: URL?, andPublicDir publicUrl: URL?) {
    self.privateUrl = privateUrl
    self.publicUrl = publicUrl
    super.init()
  }
}

/// os_log_type_t as Swift imports it (OSLogType); Linux has no `os` module.
public struct OSLogType: Equatable, Sendable {
  public let rawValue: UInt8
  public init(rawValue: UInt8) { self.rawValue = rawValue }
  public static let `default` = OSLogType(rawValue: 0x00)
  public static let info = OSLogType(rawValue: 0x01)
  public static let debug = OSLogType(rawValue: 0x02)
  public static let error = OSLogType(rawValue: 0x10)
  public static let fault = OSLogType(rawValue: 0x11)
}

/// TORLogging.h l.13: `typedef void(* tor_log_cb)(os_log_type_t severity, const char* msg)`;
/// a Swift closure here (os_log_type_t is not a C type on Linux): Onion Browser passes a
/// closure literal that captures nothing, which either accepts.
// swift-format-ignore: TypeNamesShouldBeCapitalized
public typealias tor_log_cb = (OSLogType, UnsafePointer<CChar>) -> Void

/// TORLogging.h l.17, l.21: install tor's and libevent's log callbacks. tor runs out of
/// process here; its log is in files the lane reads, so the callbacks are kept, never called.
nonisolated(unsafe) var installedTorLogging: tor_log_cb?
nonisolated(unsafe) var installedEventLogging: tor_log_cb?

// swift-format-ignore: AlwaysUseLowerCamelCase
public func TORInstallTorLoggingCallback(_ cb: @escaping tor_log_cb) { installedTorLogging = cb }
// swift-format-ignore: AlwaysUseLowerCamelCase
public func TORInstallEventLoggingCallback(_ cb: @escaping tor_log_cb) {
  installedEventLogging = cb
}

/// NSBundle+GeoIP (Tor/Classes/Core/NSBundle+GeoIP.h l.12-15, .m l.11-23): the GeoIP bundle of
/// the Tor/GeoIP pod. No such bundle here: nil, so no GeoIPFile argument.
extension Bundle {
  public static var geoIp: Bundle? { nil }
  public var geoipFile: URL? { url(forResource: "geoip", withExtension: nil) }
  public var geoip6File: URL? { url(forResource: "geoip6", withExtension: nil) }
}
