import Foundation

@testable import ArtiLinux

/// arti.h over Debian's tor (the real-Tor lane) against lib.rs's contract: tor's fine-grained
/// bootstrap reduced to Arti's 0/100, the base torrc's pinning refused when missing, and a real
/// tor (pinned to an authority on a closed loopback port, so it can never bootstrap) seen
/// through arti.h: progress 0 and "Bootstrapping..." while tor works, no SOCKS listener before
/// 100, arti_stop's code and 200 ms. (A tor that reaches 100 needs the private network: the
/// real-Tor lane's tests run that.)
enum DebianTorArtiChecks {
  static let hex40 = String(repeating: "A1", count: 20)

  static func base(authorityPort: UInt16) -> String {
    "RunAsDaemon 0\nSafeLogging 0\n"
      + "DirAuthority fccheck orport=9 no-v2 v3ident=\(hex40) 127.0.0.1:\(authorityPort) \(hex40)\n"
  }

  static func writeBase(_ text: String, name: String) -> String {
    let path = NSTemporaryDirectory() + "arti-tor-\(name)-\(getpid()).torrc"
    FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
    return path
  }

  static func refuses(_ text: String, _ fragment: String) -> String? {
    let path = writeBase(text, name: "refused")
    defer { try? FileManager.default.removeItem(atPath: path) }
    do {
      _ = try DebianTorArtiConfiguration(baseTorrcPath: path, logDirectory: "/tmp")
      return "accepted a base that \(fragment)"
    } catch {
      return "\(error)".contains(fragment) ? nil : "error '\(error)' does not say '\(fragment)'"
    }
  }

  static let all: [Check] = [
    Check("arti over tor: tor's progress maps to Arti's 0 until PROGRESS=100, then 100") {
      let cases: [(String, Int32?)] = [
        ("NOTICE BOOTSTRAP PROGRESS=0 TAG=starting SUMMARY=\"Starting\"", 0),
        ("NOTICE BOOTSTRAP PROGRESS=5 TAG=conn SUMMARY=\"Connecting to a relay\"", 0),
        (
          "NOTICE BOOTSTRAP PROGRESS=95 TAG=circuit_create SUMMARY=\"Establishing a Tor circuit\"",
          0
        ),
        ("WARN BOOTSTRAP PROGRESS=5 TAG=conn SUMMARY=\"x\" WARNING=\"y\" REASON=CONNECTREFUSED", 0),
        ("NOTICE BOOTSTRAP PROGRESS=100 TAG=done SUMMARY=\"Done\"", 100),
        ("NOTICE BOOTSTRAP TAG=done", nil),
      ]
      for (line, expected) in cases where TorBootstrapPhase(line)?.artiProgress != expected {
        return "'\(line)' gave \(String(describing: TorBootstrapPhase(line)?.artiProgress))"
      }
      return TorBootstrapPhase("NOTICE BOOTSTRAP PROGRESS=5 TAG=conn SUMMARY=\"x\"")?.tag == "conn"
        ? nil : "tag not read"
    },
    Check("arti over tor: a base that would unpin tor is refused, naming the file and line") {
      refuses("SafeLogging 0\n", "no DirAuthority line")
        ?? refuses(
          base(authorityPort: 9) + "FallbackDir 127.0.0.1:80 orport=9 id=\(hex40)\n",
          ":4: 'FallbackDir'")
        ?? refuses(base(authorityPort: 9) + "SocksPort 9050\n", ":4: 'SocksPort'")
        ?? refuses(base(authorityPort: 9) + "UseBridges 1\n", "'UseBridges'")
        ?? refuses(base(authorityPort: 9) + "DisableNetwork 0\n", "'DisableNetwork'")
        ?? refuses("%include /etc/tor/torrc.d\n" + base(authorityPort: 9), ":1: '%include'")
        ?? refuses(
          "DirAuthority a orport=9 no-v2 v3ident=\(hex40) 192.0.2.1:80 \(hex40)\n",
          "192.0.2.1:80 is not on loopback")
    },
    Check("arti over tor: the instance's torrc is the base, SocksPort 0, no fallbacks, owned") {
      let path = writeBase(base(authorityPort: 9), name: "torrc")
      defer { try? FileManager.default.removeItem(atPath: path) }
      let configuration = try DebianTorArtiConfiguration(baseTorrcPath: path, logDirectory: "/l")
      let torrc = configuration.torrc(dataDirectory: "/d", controlPortFile: "/c", owner: 42)
      for line in [
        "DirAuthority fccheck", "SocksPort 0\n", "UseDefaultFallbackDirs 0\n",
        "__OwningControllerProcess 42\n", "ControlPort 127.0.0.1:auto\n",
        "Log notice file /l/notice.log\n", "DataDirectory /d\n",
      ] where !torrc.contains(line) {
        return "torrc lacks '\(line)'"
      }
      return torrc.contains("DisableNetwork") ? "torrc sets DisableNetwork" : nil
    },
    Check("arti over tor: a real tor that cannot bootstrap: 0, Bootstrapping..., no SOCKS, stopped")
    {
      guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tor") else {
        return "needs Debian's tor (/usr/bin/tor)"
      }
      let authority = LoopbackListener.closedPort()
      let socksPort = LoopbackListener.closedPort()
      let path = writeBase(base(authorityPort: authority), name: "real")
      let directory = NSTemporaryDirectory() + "arti-tor-real-\(getpid())"
      defer {
        try? FileManager.default.removeItem(atPath: path)
        try? FileManager.default.removeItem(atPath: directory)
      }
      ArtiBackendChoice.useDebianTor(
        try DebianTorArtiConfiguration(baseTorrcPath: path, logDirectory: directory + "/logs"))
      defer { ArtiState.shared.backend = ControlledBootstrap() }
      guard arti_start(directory + "/arti", socksPort) == 0 else { return "arti_start not 0" }
      let controlFile = directory + "/arti/state/debian-tor-1/control-port"
      guard waitUntil(20, { FileManager.default.fileExists(atPath: controlFile) }) else {
        return "tor never opened its control port: "
          + ((try? String(contentsOfFile: directory + "/logs/tor-output.log", encoding: .utf8))
            ?? "no output")
      }
      // tor runs and works at its bootstrap; Arti's view stays 0 and "Bootstrapping...".
      usleep(1_500_000)
      guard arti_is_running() == 1, arti_bootstrap_progress() == 0,
        summary() == "Bootstrapping..."
      else {
        return "running \(arti_is_running()) progress \(arti_bootstrap_progress()) '\(summary())'"
      }
      guard !ExternalArtiBootstrap.accepts("127.0.0.1:\(socksPort)") else {
        return "SOCKS bound before 100"
      }
      let notice =
        (try? String(contentsOfFile: directory + "/logs/notice.log", encoding: .utf8)) ?? ""
      guard notice.contains("Bootstrapped 0%") || notice.contains("Bootstrapped 5%") else {
        return "tor's notice log shows no bootstrap: \(notice.suffix(300))"
      }
      let controlText = (try? String(contentsOfFile: controlFile, encoding: .utf8)) ?? ""
      guard let portText = controlText.split(separator: ":").last,
        let controlPort = UInt16(portText.trimmingCharacters(in: .whitespacesAndNewlines)),
        ExternalArtiBootstrap.accepts("127.0.0.1:\(controlPort)")
      else { return "control port file '\(controlText)'" }
      let started = Date()
      guard arti_stop() == 0 else { return "arti_stop not 0" }
      let seconds = Date().timeIntervalSince(started)
      guard seconds >= 0.2, arti_is_running() == 0, arti_bootstrap_progress() == 0, summary() == ""
      else { return "after stop: \(seconds) s, running \(arti_is_running()) '\(summary())'" }
      // lib.rs: a stopped instance whose bootstrap is pending keeps bootstrapping (its tor
      // keeps running) until it ends; this one never can. The process's end stops it (tor is
      // owned by this process's control connection).
      return nil
    },
  ]
}
