import Capture
import FailClosedSupport
import Foundation
import TLS

/// `failclosed version` (and `failclosed --version`): the harness version and the versions of
/// what it runs with (tor, libpcap, OpenSSL), for reports and bug reports.
public struct VersionCommand: Command {
  public static let version = "0.1.0"

  public init() {}
  public let name = "version"
  public let summary = "print the failclosed version and the tor, libpcap and OpenSSL it found"
  public let usage = """
    Usage: failclosed version   (or failclosed --version)

    Prints the version of failclosed, then the tor on PATH (the real-Tor lane and
    exec --tor real start it), and the libpcap and OpenSSL libraries it runs with.
    """
  public let options: [OptionSpec] = []

  public func run(_ arguments: ParsedArguments) async throws -> Int32 {
    print(Self.text())
    return ExitCode.pass
  }

  public static func text() -> String {
    let tor: String
    if let path = Self.onPath("tor") {
      tor = "tor \(LeakAuditCommand.torVersion()) (\(path))"
    } else {
      tor =
        "tor: not found on PATH (apt-get install tor: the real-Tor lane and exec --tor real need it)"
    }
    return [
      "failclosed \(version)", tor, PcapLibraryVersion.text, OpenSSLVersion.text,
    ].joined(separator: "\n")
  }

  /// The first executable `name` in PATH.
  static func onPath(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    for directory in path.split(separator: ":") {
      let candidate = "\(directory)/\(name)"
      if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    return nil
  }
}
