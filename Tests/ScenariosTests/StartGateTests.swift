import Foundation
import Testing

@testable import Lanes

/// One set-up per slot at a time, and a batch can wait for another's runs to have set up.
@Suite struct StartGateTests {
  @Test func aSecondRunWaitsForTheFirstsSetUpAndTheCountSaysSo() async throws {
    let gate = StartGate(capacity: 1)
    let first = StartGate.Hold(gate)
    let entered = DispatchSemaphore(value: 0)
    let second = Thread {
      let hold = StartGate.Hold(gate)
      entered.signal()
      hold.release()
    }
    second.start()
    // Held: the second run cannot enter (it would have signalled at once).
    #expect(entered.wait(timeout: .now() + 0.2) == .timedOut)
    #expect(gate.setUpCount == 0)
    first.release()
    first.release()  // twice is once
    #expect(entered.wait(timeout: .now() + 5) == .success)
    #expect(gate.waitForSetUps(2, timeout: 5))
    // A count never reached ends at the cap.
    #expect(!gate.waitForSetUps(3, timeout: 0.05))
    #expect(gate.setUpCount == 2)
  }
}
