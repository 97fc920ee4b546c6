import OnionBrowserModel
import Testing
import TorControl

/// Reports carry no secrets: what the controllers report (and the app's events, and so every
/// report file, are built from) never holds a control password or cookie, even when tor
/// refuses it.
@Suite struct ReportSecretsTests {
  static let password = "hunter2-very-secret"
  static let cookieHex = String(repeating: "c0ffee", count: 10) + "abcd"

  static func reportsText(_ reports: [OnionBrowserReport]) -> String {
    reports.map { "\($0)" }.joined(separator: "\n")
  }

  @Test(
    arguments: [OnionBrowserVersion.v1, .v2, .v3],
    [
      "AUTHENTICATE \"\(password)\"", "AUTHENTICATE \(cookieHex)",
    ])
  func aRefusedAuthenticateIsReportedWithoutItsSecret(
    _ version: OnionBrowserVersion, _ authenticate: String
  ) {
    var controller = OnionBrowserController(
      configuration: .init(version: version, authenticate: authenticate))
    // 1.X opens its control connection 0.15 s after launching tor.
    let start = controller.launch(at: 0)
    let opened = controller.tick(at: 1)
    let connected = controller.connected(at: 1)
    // The secret goes on the wire (that is its purpose) ...
    #expect((start.lines + opened.lines + connected.lines).contains(authenticate))
    // ... and nowhere else: not in what is reported when sent, nor when tor refuses it.
    var reports = start.reports + opened.reports + connected.reports
    reports +=
      controller.receive(
        Array("515 Authentication failed: Password did not match HashedControlPassword\r\n".utf8),
        at: 1.1
      ).reports
    let text = Self.reportsText(reports)
    #expect(text.contains("AUTHENTICATE <secret>"), "\(text)")
    #expect(!text.contains(Self.password) && !text.contains(Self.cookieHex), "\(text)")
  }

  /// The mock's control port logs every command, AUTHENTICATE with its secret redacted.
  @Test func theMockLogsAuthenticateRedacted() {
    var session = ControlSession(
      authentication: ControlAuthentication(password: Self.password),
      makeNonce: { [UInt8](repeating: 7, count: 32) })
    var context = ControlContext()
    let output = session.receive(
      Array("AUTHENTICATE \"\(Self.password)\"\r\nGETINFO version\r\n".utf8), context: &context)
    let logged = output.commands.map { "\($0.keyword) \($0.arguments)" }.joined(separator: "\n")
    #expect(logged.contains("AUTHENTICATE"))
    #expect(!logged.contains(Self.password), "\(logged)")
  }
}
