import Testing
import TorControl

@testable import OnionBrowserModel

/// A control port that sends what no tor sends (a `250+` block whose line never ends): 2.X and
/// 3.X close the connection, as TORController does on a reply it cannot read, and tell the edge
/// to close its socket, so the peer's bytes stop being read; nothing is sent after.
@Suite struct HostileControlReplyTests {
  @Test(arguments: [OnionBrowserVersion.v2, .v3])
  func aReplyPastTheParsersCapClosesTheConnection(_ version: OnionBrowserVersion) {
    var h = OnionBrowserControllerTests.tfSetUp(version)
    let endless = "250+ns/all=\r\n" + String(repeating: "r", count: 1 << 20)
    h.feed(endless, at: 2)
    h.feed("rr", at: 2.5)
    let closed = h.reports.compactMap { report -> String? in
      if case .closed(let reason) = report { return reason }
      return nil
    }
    #expect(closed == ["control reply at byte 71: line longer than 1048576 bytes"])
    #expect(h.closes == [2.5])
    let sentBefore = h.sent.count
    // Closed: more of the same is not read, and the app sends nothing on the dead socket.
    h.feed(String(repeating: "r", count: 1 << 20), at: 3)
    #expect(h.reports.filter { if case .closed = $0 { true } else { false } }.count == 1)
    #expect(h.sent.count == sentBefore)
  }
}
