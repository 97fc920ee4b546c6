import FailClosedCLI
import Testing

/// `failclosed app --backend tor` and `--bridge`: bad input is refused before anything runs,
/// naming the flag and the file or line at fault.
@Suite struct AppTorOptionsTests {
  func error(_ arguments: [String]) async -> String? {
    do {
      let command = AppCommand()
      let parsed = try ArgumentParser.parse(
        ["--actions", "/nonexistent/actions"] + arguments, options: command.options)
      _ = try await command.run(parsed)
      return nil
    } catch {
      return "\(error)"
    }
  }

  @Test func badTorInputIsNamed() async {
    let cases: [([String], String)] = [
      (["--backend", "tor"], "--backend tor needs --torrc-base FILE"),
      (
        ["--backend", "tor", "--torrc-base", "/nonexistent/base"],
        "--torrc-base /nonexistent/base: no such file"
      ),
      (
        ["--backend", "tor", "--torrc-base", "/etc/hostname", "--tor-binary", "/nonexistent/tor"],
        "--tor-binary /nonexistent/tor: not an executable file"
      ),
      (
        ["--bridge", "127.0.0.1:1", "--bridge", "obfs4 127.0.0.1:2 XYZ cert=c iat-mode=0"],
        "--bridge: tor.bridges[1]: 'XYZ' is not a 40-hex-digit fingerprint"
      ),
      (["--torrc-base", "/etc/hostname"], "--torrc-base and --tor-binary need --backend tor"),
    ]
    for (arguments, message) in cases {
      let error = await error(arguments)
      #expect(error?.contains(message) == true, "\(arguments): \(error ?? "no error")")
    }
  }

  @Test func helpNamesTheTorOptions() {
    let help = AppCommand().helpText
    for option in ["--torrc-base", "--tor-binary", "--bridge", "tor.bridges"] {
      #expect(help.contains(option), "\(option)")
    }
  }
}
