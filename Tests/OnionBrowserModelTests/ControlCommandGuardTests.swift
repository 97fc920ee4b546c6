import OnionBrowserModel
import Testing
import TorControl

/// The controllers' last check before the wire: nothing that could let a pinned tor reach the
/// public network is sent (`SETCONF DisableNetwork` with no value resets it to 0).
@Suite struct ControlCommandGuardTests {
  @Test(arguments: [
    "SETCONF DisableNetwork", "setconf disablenetwork", "SETCONF DisableNetwork=",
    "RESETCONF DisableNetwork", "RESETCONF DisableNetwork=1", "SETCONF DisableNetwork=yes",
    "SETCONF UseBridges=0", "SETCONF UseBridges", "RESETCONF Bridge",
    "SETCONF Bridge=\"192.0.2.1:443\"", "SETCONF DirAuthority=\"x 198.51.100.1:80 AA\"",
    "SETCONF UseDefaultFallbackDirs=1", "SETCONF DisableNetwork=0 UseBridges=0",
    "+LOADCONF", "SETCONF Socks5Proxy=192.0.2.7:1080",
  ])
  func refusesWhatCouldUnpinTor(_ line: String) {
    #expect(ControlCommandGuard.refusal(for: line) != nil, "\(line)")
  }

  /// Positive controls: what the controllers send every day.
  @Test(arguments: [
    "SETCONF DisableNetwork=0", "SETCONF DisableNetwork=1", "SETCONF DisableNetwork=\"0\"",
    "AUTHENTICATE 00ff", "SETEVENTS STATUS_CLIENT", "GETINFO status/bootstrap-phase",
    "SIGNAL HUP", "TAKEOWNERSHIP", "GETCONF DisableNetwork", "SIGNAL SHUTDOWN",
  ])
  func letsOrdinaryCommandsThrough(_ line: String) {
    #expect(ControlCommandGuard.refusal(for: line) == nil, "\(line)")
  }

  @Test func theMessageSaysWhy() {
    #expect(
      ControlCommandGuard.refusal(for: "SETCONF DisableNetwork")
        == "SETCONF DisableNetwork without the value 0 or 1 resets it to 0 (give the value)")
  }

  /// Every line each Onion Browser version's controller sends, over a whole session, passes
  /// the guard (the guard would otherwise stop the model's own traffic).
  @Test(arguments: [OnionBrowserVersion.v1, .v2, .v3])
  func theControllersOwnLinesPass(version: OnionBrowserVersion) {
    var controller = OnionBrowserController(
      configuration: .init(version: version, bridgesConfigured: false))
    var lines = controller.launch(at: 0).lines + controller.connected(at: 0).lines
    for step in 1...40 {
      lines += controller.receive(Array("250 OK\r\n".utf8), at: Double(step)).lines
      lines += controller.tick(at: Double(step) * 2).lines
      if step == 20 { lines += controller.networkChanged(at: Double(step)).lines }
    }
    lines += controller.background(at: 100).lines
    for line in lines {
      #expect(ControlCommandGuard.refusal(for: line) == nil, "\(line)")
    }
    #expect(!lines.isEmpty)
  }
}
