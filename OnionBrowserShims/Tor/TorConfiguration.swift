import Foundation

/// Tor.framework's TORConfiguration (Swift name TorConfiguration), following
/// iCepa/Tor.framework Tor/Classes/Core/TORConfiguration.m at v408.10.1
/// (feb1942d10e97a9a4e1a6f595267ba503ed12ec7, the version Onion Browser 3.X @44edf9a8 pins in
/// Podfile.lock) and TORConfiguration.h l.15-39 for the properties. v407.13.1
/// (f258efba51648d4258475edac1ddd315d6acd823, pinned by 2.X @9a17dd4f) lacks only the
/// cacheDirectory, socksPort, dnsPort and logfile arguments of compile (l.71-74, l.95-101,
/// l.123-126 here), which neither OnionManager nor TorManager sets.
open class TorConfiguration: NSObject {
  open var dataDirectory: URL?
  open var cacheDirectory: URL?
  open var controlSocket: URL?
  open var socksURL: URL?
  open var socksPort: UInt = 0
  open var dnsPort: UInt = 0
  open var clientAuthDirectory: URL?
  open var hiddenServiceDirectory: URL?
  open var geoipFile: URL?
  open var geoip6File: URL?
  open var logfile: URL?
  open var ignoreMissingTorrc = false
  open var cookieAuthentication = false
  open var autoControlPort = false
  open var avoidDiskWrites = false
  open var clientOnly = false

  /// l.14-18 (null_resettable: never nil).
  open var options: [String: String] = [:]
  /// l.20-24.
  open var arguments: [String] = []

  public override init() { super.init() }

  /// l.26-28: `<dataDirectory>/controlport`.
  open var controlPortFile: URL? {
    dataDirectory?.appendingPathComponent("controlport")
  }

  /// l.30-32.
  open var serviceAuthDirectory: URL? {
    hiddenServiceDirectory?.appendingPathComponent("authorized_clients")
  }

  /// l.34-41: tor's `lock` file exists in the data directory.
  open var isLocked: Bool {
    guard let url = dataDirectory?.appendingPathComponent("lock"), url.isFileURL else {
      return false
    }
    return FileManager.default.fileExists(atPath: url.path)
  }

  /// l.43-49: `<dataDirectory>/control_auth_cookie`, nil when unreadable.
  open var cookie: Data? {
    guard let url = dataDirectory?.appendingPathComponent("control_auth_cookie"), url.isFileURL
    else { return nil }
    return try? Data(contentsOf: url)
  }

  /// l.51-138: tor's command line. The options' order: ObjC's NSDictionary allKeys order is
  /// unspecified; here sorted, so a run is repeatable.
  open func compile() -> [String] {
    var arguments: [String] = []
    if ignoreMissingTorrc { arguments += ["--allow-missing-torrc", "--ignore-missing-torrc"] }
    if avoidDiskWrites { arguments += ["--AvoidDiskWrites", "1"] }
    if clientOnly { arguments += ["--ClientOnly", "1"] }
    if let url = dataDirectory, url.isFileURL { arguments += ["--DataDirectory", url.path] }
    if let url = cacheDirectory, url.isFileURL { arguments += ["--CacheDirectory", url.path] }
    if cookieAuthentication { arguments += ["--CookieAuthentication", "1"] }
    if autoControlPort, let url = controlPortFile, url.isFileURL {
      arguments += ["--ControlPort", "auto", "--ControlPortWriteToFile", url.path]
    }
    if let url = controlSocket, url.isFileURL { arguments += ["--ControlSocket", url.path] }
    if let url = socksURL, url.isFileURL { arguments += ["--SocksPort", "unix:\(url.path)"] }
    if socksPort > 0 { arguments += ["--SocksPort", String(socksPort)] }
    if dnsPort > 0 { arguments += ["--DnsPort", String(dnsPort)] }
    if let url = clientAuthDirectory, url.isFileURL {
      arguments += ["--ClientOnionAuthDir", url.path]
    }
    if !clientOnly, let url = hiddenServiceDirectory, url.isFileURL {
      arguments += ["--HiddenServiceDir", url.path]
    }
    if let url = geoipFile, url.isFileURL { arguments += ["--GeoIPFile", url.path] }
    if let url = geoip6File, url.isFileURL { arguments += ["--GeoIPv6File", url.path] }
    if let url = logfile, url.isFileURL { arguments += ["--Log", "notice file \(url.path)"] }
    arguments += self.arguments
    for key in options.keys.sorted() {
      arguments.append("--\(key)")
      if let value = options[key] { arguments.append(value) }
    }
    return arguments
  }
}
