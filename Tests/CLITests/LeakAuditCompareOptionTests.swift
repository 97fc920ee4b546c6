import Scenarios
import Testing

@testable import FailClosedCLI

/// `leak-audit --compare A,B`: two different sides of bitchat, hardened and bitchat-source, or
/// a usage error naming the option; the scenarios compared are the mock lane's bitchat ones,
/// and only those bitchat's driver runs when bitchat-source is a side.
@Suite struct LeakAuditCompareOptionTests {
  @Test func sidesAreTwoDifferentKnownNames() throws {
    #expect(
      try LeakAuditCompare.parseSides("bitchat,bitchat-source") == ("bitchat", "bitchat-source"))
    #expect(try LeakAuditCompare.parseSides("hardened,bitchat") == ("hardened", "bitchat"))
    for bad in ["bitchat", "bitchat,bitchat", "bitchat,iphone", "a,b,c", ""] {
      #expect {
        _ = try LeakAuditCompare.parseSides(bad)
      } throws: { error in
        "\(error)".contains("--compare: expected two different sides")
          && "\(error)".contains("got '\(bad)'")
      }
    }
  }

  @Test func theComparedScenariosAreTheMockLanesBitchatOnes() throws {
    let loaded = ScenarioLoader.load([RepositoryFiles.path("Scenarios")]).compactMap {
      try? $0.result.get()
    }
    let withSource = LeakAuditCompare.comparable(loaded, a: "bitchat", b: "bitchat-source")
    #expect(withSource.count == 20)
    #expect(withSource.allSatisfy { $0.app.profile == .bitchat && $0.lane == .mock })
    #expect(withSource.allSatisfy { $0.tor.mock?.personality == .arti })
    // Two model profiles also take the ctor scenarios and the hardened files.
    let models = LeakAuditCompare.comparable(loaded, a: "bitchat", b: "hardened")
    #expect(models.count > withSource.count)
    #expect(models.contains { $0.app.profile == .hardened })
    #expect(LeakAuditCompare.onSide(withSource[0], "bitchat-source").app.profile == .bitchatSource)
  }
}
