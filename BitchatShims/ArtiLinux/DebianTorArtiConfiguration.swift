import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// The real-Tor lane's Arti settings: the private network's torrc base (its DirAuthority lines
/// and testing options, written by the harness) and the directory for tor's logs, which the
/// lane's log watcher reads. Each arti_start gets its own tor, configured by `torrc` below.
public struct DebianTorArtiConfiguration: Sendable, Equatable {
  public let baseTorrc: String
  public let logDirectory: String
  public var torBinary = "/usr/bin/tor"

  /// Reads the base and checks that it pins tor: at least one DirAuthority line, nothing the
  /// backend sets itself, no FallbackDir or bridge, and (outside a harness namespace) only
  /// loopback authorities. Every error names the file and line.
  public init(baseTorrcPath: String, logDirectory: String) throws {
    guard let data = FileManager.default.contents(atPath: baseTorrcPath) else {
      throw ArtiTorError("--tor-base \(baseTorrcPath): cannot read the file")
    }
    let text = String(decoding: data, as: UTF8.self)
    try Self.checkBase(
      text, path: baseTorrcPath, inHarnessNamespace: Self.runsInHarnessNamespace())
    baseTorrc = text
    self.logDirectory = logDirectory
  }

  /// Options this backend writes itself, and options that would unpin tor.
  static let refusedOptions: Set<String> = [
    "datadirectory", "socksport", "controlport", "controlportwritetofile", "cookieauthentication",
    "cookieauthfile", "hashedcontrolpassword", "disablenetwork", "usebridges", "bridge",
    "clienttransportplugin", "fallbackdir", "usedefaultfallbackdirs", "__owningcontrollerprocess",
  ]

  static func checkBase(_ text: String, path: String, inHarnessNamespace: Bool) throws {
    var authorities = 0
    for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
      let line = raw.trimmingCharacters(in: .whitespaces)
      guard !line.isEmpty, !line.hasPrefix("#") else { continue }
      let place = "--tor-base \(path):\(index + 1)"
      let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
      let option = fields[0].lowercased()
      // A daemonised tor would outlive the app; %include cannot be checked.
      let daemon = option == "runasdaemon" && fields.dropFirst().first != "0"
      if option.hasPrefix("%") || refusedOptions.contains(option) || daemon {
        throw ArtiTorError("\(place): '\(fields[0])' is not allowed in the base")
      }
      guard option == "dirauthority" else { continue }
      authorities += 1
      // The address is the IP:PORT field (the others are name, key=value, fingerprint).
      guard let address = fields.dropFirst().first(where: { !$0.contains("=") && $0.contains(":") })
      else { throw ArtiTorError("\(place): DirAuthority has no IP:PORT") }
      if !inHarnessNamespace && !address.hasPrefix("127.") {
        throw ArtiTorError(
          "\(place): DirAuthority \(address) is not on loopback, and this process runs outside "
            + "the harness's namespaces")
      }
    }
    guard authorities > 0 else {
      throw ArtiTorError(
        "--tor-base \(path): no DirAuthority line (tor would use the public network)")
    }
  }

  /// One instance's torrc: the base, then what this backend owns. No SOCKS port until the
  /// bootstrap is done (lib.rs binds its listener only then); a control port on a free loopback
  /// port, written to a file, so an old instance still bootstrapping after arti_stop and the
  /// new one do not collide; logs appended to the lane's files; tor exits with this process.
  func torrc(dataDirectory: String, controlPortFile: String, owner: Int32) -> String {
    var text = baseTorrc
    if !text.isEmpty && !text.hasSuffix("\n") { text += "\n" }
    return text + "# failclosed arti.h over Debian's tor: the instance's own options\n"
      + [
        "DataDirectory \(dataDirectory)",
        "SocksPort 0",
        "ControlPort 127.0.0.1:auto",
        "ControlPortWriteToFile \(controlPortFile)",
        "CookieAuthentication 1",
        "Log notice file \(logDirectory)/notice.log",
        // Bootstrap problems reach the info level first; the lane's watcher reads this file.
        "Log [control]info file \(logDirectory)/bootstrap-problems.log",
        "ClientUseIPv6 0",
        "UseDefaultFallbackDirs 0",
        "__OwningControllerProcess \(owner)",
      ].joined(separator: "\n") + "\n"
  }

  /// Whether this process runs in one of the harness's named namespaces (`fc-...`), whose only
  /// way out is the harness's censor and world.
  static func runsInHarnessNamespace() -> Bool {
    var own = stat()
    guard stat("/proc/self/ns/net", &own) == 0,
      let names = try? FileManager.default.contentsOfDirectory(atPath: "/run/netns")
    else { return false }
    return names.contains { name in
      var named = stat()
      return name.hasPrefix("fc-") && stat("/run/netns/" + name, &named) == 0
        && named.st_ino == own.st_ino && named.st_dev == own.st_dev
    }
  }
}

/// tor's `status/bootstrap-phase` answer ("NOTICE BOOTSTRAP PROGRESS=100 TAG=done
/// SUMMARY=\"Done\""), reduced to what lib.rs exposes: Arti's progress is 0 until
/// `create_bootstrapped` returns, then 100, so only "done or not" matters.
public struct TorBootstrapPhase: Sendable, Equatable {
  public let progress: Int
  public let tag: String

  public init?(_ line: String) {
    let fields = line.split(separator: " ")
    guard let progressField = fields.first(where: { $0.hasPrefix("PROGRESS=") }),
      let progress = Int(progressField.dropFirst("PROGRESS=".count))
    else { return nil }
    self.progress = progress
    tag = fields.first(where: { $0.hasPrefix("TAG=") }).map { String($0.dropFirst(4)) } ?? ""
  }

  /// lib.rs's BOOTSTRAP_PROGRESS for this phase: 100 once tor is done, 0 before.
  public var artiProgress: Int32 { progress >= 100 ? 100 : 0 }
}

public struct ArtiTorError: Error, CustomStringConvertible, Sendable {
  public let description: String
  public init(_ description: String) { self.description = description }
}
