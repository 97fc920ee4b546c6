import Testing

@testable import TorControl

@Suite struct BridgeLineTests {
  let cert = "cert=ssH+9rP8dG2NLDN2XuFw63hIO/9MNNinLmxQDpVa+7kTOa9/m+tGWT1SmSYpQ9uTBGa6Hw"

  @Test func parsesAnObfs4LineAndPrintsItBack() throws {
    let line = try BridgeLine(
      "Bridge obfs4 10.66.1.15:4433 0123456789ABCDEF0123456789ABCDEF01234567 \(cert) iat-mode=0")
    #expect(line.transport == "obfs4")
    #expect(line.host == "10.66.1.15")
    #expect(line.port == 4433)
    #expect(line.fingerprint == "0123456789ABCDEF0123456789ABCDEF01234567")
    #expect(line.arguments["iat-mode"] == "0")
    #expect(try BridgeLine(line.text) == line)
  }

  @Test func parsesAVanillaBridgeAndIPv6() throws {
    #expect(try BridgeLine("127.0.0.1:9001").transport == nil)
    #expect(try BridgeLine("[fd66::5]:443").host == "fd66::5")
  }

  @Test(arguments: [
    ("", "empty line"),
    ("obfs4", "missing IP:PORT after the transport"),
    ("meek 1.2.3.4:1", "transport 'meek' is not supported (supported: obfs4)"),
    ("bridge.example.org:443", "'bridge.example.org' is not an IP address"),
    ("10.0.0.1:0", "'10.0.0.1:0' has no valid port (1-65535)"),
    ("10.0.0.1:99999", "'10.0.0.1:99999' has no valid port (1-65535)"),
    ("10.0.0.1", "'10.0.0.1' is not IP:PORT"),
    ("10.0.0.1:443 ABCD", "'ABCD' is not a 40-hex-digit fingerprint"),
    ("obfs4 10.0.0.1:443 iat-mode=0", "obfs4 needs cert=..."),
    ("10.0.0.1:443 foo=bar", "key=value arguments need a transport"),
    ("300.0.0.1:443", "'300.0.0.1' is not an IP address"),
  ])
  func rejectsMalformedLinesNamingThePart(_ input: String, _ reason: String) {
    do {
      _ = try BridgeLine(input)
      Issue.record("accepted '\(input)'")
    } catch let error as BridgeLine.ParseError {
      #expect(error.reason.hasPrefix(reason), "got: \(error.reason)")
      #expect(error.description.hasPrefix("bridge line '\(input)'"))
    } catch {
      Issue.record("unexpected error \(error)")
    }
  }
}
