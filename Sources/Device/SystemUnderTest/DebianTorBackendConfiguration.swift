import FailClosedSupport
import Foundation

/// What `failclosed app --backend tor` needs, checked before anything runs: the base torrc (the
/// network's settings, which the harness writes), the tor binary, where state goes, and the
/// loopback ports. The base may not set what the app owns, must name its own directory
/// authorities (tor would otherwise use the public network's) and, outside a harness namespace,
/// may name only loopback addresses.
public struct DebianTorConfiguration: Sendable {
  public let baseTorrcPath: String
  public let baseTorrc: String
  public let torBinary: String
  /// `<state-dir>/tor` holds torrc, data/, and the logs.
  public let directory: String
  public let socksPort: UInt16
  public let controlPort: UInt16
  /// Addresses the base sends tor to (DirAuthority and FallbackDir lines).
  public let directoryAddresses: [String]
  /// Whether this process runs in the host's network namespace, where tor may reach only
  /// loopback (checked for the base now and for bridges at each start).
  public let confinedToLoopback: Bool
  /// Real seconds to wait for tor's control port and cookie after starting it.
  public var controlWaitSeconds: Double = 30

  public static let defaultControl = SocketAddress("127.0.0.1:39051")!
  public static let defaultTorBinary = "/usr/bin/tor"

  /// Options the app writes itself; a base that sets one is refused (the line is named).
  static let ownedOptions: Set<String> = [
    "datadirectory", "socksport", "controlport", "controlsocket", "cookieauthentication",
    "cookieauthfile", "hashedcontrolpassword", "disablenetwork", "usebridges", "bridge",
    "clienttransportplugin", "__owningcontrollerprocess", "usedefaultfallbackdirs",
  ]

  /// Reads and checks everything; every error names the flag and the file or value at fault.
  public init(
    baseTorrcPath: String, torBinary: String = DebianTorConfiguration.defaultTorBinary,
    stateDirectory: String, socks: SocketAddress,
    control: SocketAddress = DebianTorConfiguration.defaultControl,
    confinedToLoopback: Bool = NetworkConfinement.runsInHostNamespace()
  ) throws {
    guard FileManager.default.fileExists(atPath: baseTorrcPath) else {
      throw DebianTorConfigurationError("--torrc-base \(baseTorrcPath): no such file")
    }
    guard let data = FileManager.default.contents(atPath: baseTorrcPath) else {
      throw DebianTorConfigurationError("--torrc-base \(baseTorrcPath): cannot read the file")
    }
    guard access(torBinary, X_OK) == 0 else {
      throw DebianTorConfigurationError("--tor-binary \(torBinary): not an executable file")
    }
    for (flag, address) in [("--socks", socks), ("--control", control)]
    where address.host != "127.0.0.1" {
      throw DebianTorConfigurationError(
        "\(flag) \(address): the tor backend listens on 127.0.0.1 only")
    }
    let text = String(decoding: data, as: UTF8.self)
    let addresses = try DebianTorConfiguration.checkBase(
      text, path: baseTorrcPath, confinedToLoopback: confinedToLoopback)
    self.baseTorrcPath = baseTorrcPath
    self.baseTorrc = text
    self.torBinary = torBinary
    // Absolute: tor warns about (and resolves) relative paths itself.
    self.directory = URL(fileURLWithPath: stateDirectory).standardizedFileURL.path + "/tor"
    self.socksPort = socks.port
    self.controlPort = control.port
    self.directoryAddresses = addresses
    self.confinedToLoopback = confinedToLoopback
  }

  public var torrcPath: String { directory + "/torrc" }
  public var dataDirectory: String { directory + "/data" }
  public var cookiePath: String { dataDirectory + "/control_auth_cookie" }
  public var noticeLogPath: String { directory + "/notice.log" }
  /// tor's own stdout and stderr (a torrc it rejects is explained there).
  public var outputPath: String { directory + "/tor-output.log" }
  public var control: SocketAddress { SocketAddress("127.0.0.1:\(controlPort)")! }

  /// Checks a base torrc line by line; returns the addresses of its DirAuthority and
  /// FallbackDir lines.
  static func checkBase(_ text: String, path: String, confinedToLoopback: Bool) throws
    -> [String]
  {
    var addresses: [String] = []
    var authorities = 0
    for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let line = raw.trimmingCharacters(in: .whitespaces)
      guard !line.isEmpty, !line.hasPrefix("#") else { continue }
      let place = "--torrc-base \(path):\(index + 1)"
      let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
      let option = fields[0].lowercased()
      if option.hasPrefix("%") {
        throw DebianTorConfigurationError("\(place): '\(fields[0])' is not allowed in the base")
      }
      if ownedOptions.contains(option) {
        throw DebianTorConfigurationError(
          "\(place): '\(fields[0])' is set by the app itself; remove it from the base")
      }
      // A daemonised tor would leave the app's process tree and outlive it.
      if option == "runasdaemon" && fields.dropFirst().first != "0" {
        throw DebianTorConfigurationError("\(place): tor must not run as a daemon (RunAsDaemon 0)")
      }
      guard option == "dirauthority" || option == "fallbackdir" else { continue }
      if option == "dirauthority" { authorities += 1 }
      // The address is the one IP:PORT field (the others are name, key=value, fingerprint).
      guard
        let endpoint = fields.dropFirst().first(where: {
          !$0.contains("=") && SocketAddress($0) != nil
        }), let address = SocketAddress(endpoint)
      else {
        throw DebianTorConfigurationError("\(place): \(fields[0]) has no IP:PORT")
      }
      if confinedToLoopback && !address.isLoopback {
        throw DebianTorConfigurationError(
          "\(place): \(fields[0]) at \(endpoint) is not on loopback, and this process runs in "
            + "the host's network namespace (run it in the harness's device namespace)")
      }
      addresses.append(endpoint)
    }
    guard authorities > 0 else {
      throw DebianTorConfigurationError(
        "--torrc-base \(path): no DirAuthority line (tor would use the public Tor network)")
    }
    return addresses
  }
}

public struct DebianTorConfigurationError: Error, Equatable, CustomStringConvertible, Sendable {
  public let description: String
  public init(_ description: String) { self.description = description }
}

/// Where this process's network is: one of the harness's namespaces (the device, whose only way
/// out is the censor and the world) or anywhere else (the host's, which may reach the Internet).
public enum NetworkConfinement {
  /// Names of the harness's namespaces start with this (Sandbox's `SandboxNames.harnessPrefix`).
  static let harnessPrefix = "fc-"
  static let namedNamespaces = "/run/netns"

  /// The harness namespace (named by `ip netns add`, `fc-...`) this process runs in, or nil.
  public static func harnessNamespace() -> String? {
    var own = stat()
    guard stat("/proc/self/ns/net", &own) == 0,
      let names = try? FileManager.default.contentsOfDirectory(atPath: namedNamespaces)
    else { return nil }
    for name in names.sorted() where name.hasPrefix(harnessPrefix) {
      var named = stat()
      if stat(namedNamespaces + "/" + name, &named) == 0, named.st_ino == own.st_ino,
        named.st_dev == own.st_dev
      {
        return name
      }
    }
    return nil
  }

  /// True unless this process runs in a harness namespace: then tor may reach only loopback.
  public static func runsInHostNamespace() -> Bool { harnessNamespace() == nil }
}
