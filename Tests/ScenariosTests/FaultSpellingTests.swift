import MockTor
import Testing

@testable import Lanes
@testable import Scenarios

/// A scenario's stream faults reach the mock as its toxics' spelling: every kind a scenario
/// file may name is spelled as a registered toxic, which the mock reads back.
@Suite struct FaultSpellingTests {
  @Test(arguments: StreamFault.Kind.allCases)
  func everyScenarioFaultIsARegisteredToxic(_ kind: StreamFault.Kind) throws {
    let fault = StreamFault(
      destination: "relay.test:443", kind: kind, milliseconds: 250, afterBytes: 100, reply: 0xF2)
    let spec = ScenarioCommandLines.faultSpec(fault)
    let toxics = try StreamToxics(parsing: spec)
    #expect(toxics.toxics.count == 1, "\(kind.rawValue) -> '\(spec)'")
    #expect(StreamToxics.kind(named: toxics.toxics[0].toxicName) != nil)
    #expect(toxics.description == spec, "the mock writes it back the same way")
  }
}
