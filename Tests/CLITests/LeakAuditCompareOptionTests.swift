import Lanes
import Scenarios
import Testing

@testable import FailClosedCLI

/// `leak-audit --compare A,B`: two different sides looked up in the registry (SYSTEM,
/// SYSTEM:PROFILE, or a profile the model plays), or a usage error naming the option and every
/// registered side; what each side runs, whether it waits in real time and which differences
/// are known come from what its system declares.
@Suite struct LeakAuditCompareOptionTests {
  static func library() -> [Scenario] {
    ScenarioLoader.load([RepositoryFiles.path("Scenarios")]).compactMap { try? $0.result.get() }
  }

  static func sides(_ text: String) throws -> (a: ComparisonSide, b: ComparisonSide) {
    try LeakAuditCompare.parseSides(text)
  }

  @Test func sidesAreTwoDifferentRegisteredOnes() throws {
    let source = try Self.sides("bitchat,bitchat-source")
    #expect(source.a.name == "bitchat" && source.b.name == "bitchat-source")
    #expect(source.a.system.name == "model" && source.a.model?.profile == .bitchat)
    #expect(source.b.system.name == "bitchat-source" && source.b.model == nil)
    let models = try Self.sides("hardened,model:bitchat")
    #expect(models.a.name == "hardened" && models.b.name == "bitchat")
    for bad in [
      "bitchat", "bitchat,bitchat", "bitchat,model:bitchat", "bitchat,iphone", "a,b,c", "",
      "model,bitchat-source", "program,bitchat", "bitchat-source:bitchat,bitchat",
      "model:naive-port,bitchat",
    ] {
      #expect {
        _ = try Self.sides(bad)
      } throws: { error in
        "\(error)".contains("--compare: expected two different sides")
          && "\(error)".contains("got '\(bad)'")
      }
    }
  }

  /// Every side the registry offers is spelled as the reports name it and found again; an
  /// unknown one is told every registered side. Iterates the registry, not a list.
  @Test func everyRegisteredSideIsLookedUpAndAnUnknownOneListsThemAll() throws {
    let names = ComparisonSide.names()
    #expect(!names.isEmpty)
    for system in TestedSystems.all {
      for played in system.comparison.plays {
        let spelled = "\(system.name):\(played.profile.rawValue)"
        let side = try ComparisonSide.named(spelled)
        #expect(side.system.name == system.name && side.model?.profile == played.profile)
        #expect(names.contains(side.name), "\(spelled)")
        #expect(try ComparisonSide.named(side.name).isSame(as: side), "\(side.name)")
      }
      if !system.comparison.heldAgainst.isEmpty {
        let side = try ComparisonSide.named(system.name)
        #expect(side.model == nil && side.name == system.name && names.contains(system.name))
      } else if system.comparison.plays.isEmpty {
        #expect(throws: ComparisonSide.LookUpError.self) {
          try ComparisonSide.named(system.name)
        }
      }
    }
    #expect {
      _ = try Self.sides("bitchat,iphone")
    } throws: { error in
      names.allSatisfy { "\(error)".contains($0) } && "\(error)".contains("no side iphone")
    }
  }

  @Test func theComparedScenariosAreThoseBothSidesRun() throws {
    let loaded = Self.library()
    let source = try Self.sides("bitchat,bitchat-source")
    let withSource = LeakAuditCompare.comparable(loaded, a: source.a, b: source.b)
    #expect(withSource.count == 20)
    #expect(withSource.allSatisfy { $0.app.profile == .bitchat && $0.lane == .mock })
    #expect(withSource.allSatisfy { $0.tor.mock?.personality == .arti })
    #expect(source.b.run(withSource[0])?.app.profile == .bitchatSource)
    #expect(source.a.run(withSource[0])?.app.profile == .bitchat)
    // hardened against bitchat's code: the same bitchat files, played as hardened.
    let hardened = try Self.sides("hardened,bitchat-source")
    let againstHardened = LeakAuditCompare.comparable(loaded, a: hardened.a, b: hardened.b)
    #expect(againstHardened.map(\.name) == withSource.map(\.name))
    #expect(hardened.a.run(againstHardened[0])?.app.profile == .hardened)
    // Two model profiles also take the ctor scenarios and the hardened files.
    let models = try Self.sides("bitchat,hardened")
    let bothModels = LeakAuditCompare.comparable(loaded, a: models.a, b: models.b)
    #expect(bothModels.count > withSource.count)
    #expect(bothModels.contains { $0.app.profile == .hardened })
    #expect(bothModels.allSatisfy { [.bitchat, .hardened].contains($0.app.profile) })
    // Onion Browser's code against a version's model: that version's ctor files.
    for (model, profiles) in [
      ("onion-browser-2", [AppPlan.Profile.onionBrowser2]),
      ("onion-browser-3", [.onionBrowser3, .onionBrowser]),
    ] {
      let onion = try Self.sides("\(model),onion-browser-source")
      let compared = LeakAuditCompare.comparable(loaded, a: onion.a, b: onion.b)
      let expected = loaded.filter {
        $0.lane == .mock && profiles.contains($0.app.profile)
          && $0.tor.mock?.personality == .ctor
      }
      #expect(!compared.isEmpty && compared.map(\.name) == expected.map(\.name), "\(model)")
    }
    // Sides of two apps share no scenario.
    let apart = try Self.sides("bitchat,onion-browser-source")
    #expect(LeakAuditCompare.comparable(loaded, a: apart.a, b: apart.b).isEmpty)
  }

  /// The differences the docs explain are what each system declares against each model it
  /// is held against (iterating the registry), none between two models; and the two the
  /// project ships stay what they were.
  @Test func theKnownDifferencesAreTheSystemsDeclarations() throws {
    for system in TestedSystems.all where !system.comparison.heldAgainst.isEmpty {
      let code = try ComparisonSide.named(system.name)
      for counterpart in system.comparison.heldAgainst {
        let model = try ComparisonSide.named(counterpart.profile.rawValue)
        #expect(code.knownDifferences(with: model) == counterpart.known)
        #expect(model.knownDifferences(with: code) == counterpart.known)
      }
    }
    // (.linux holds no entry today: equal to .none, so the two below say the same.)
    let linux = try Self.sides("bitchat,bitchat-source")
    #expect(linux.a.knownDifferences(with: linux.b) == .linux)
    let hardened = try Self.sides("bitchat-source,hardened")
    #expect(hardened.a.knownDifferences(with: hardened.b) == KnownDifferences.none)
    let onion = try Self.sides("onion-browser-3,onion-browser-source")
    #expect(onion.a.knownDifferences(with: onion.b) == .onionBrowser)
    let models = try Self.sides("bitchat,hardened")
    #expect(models.a.knownDifferences(with: models.b) == KnownDifferences.none)
  }

  /// A system added to the list is a side by what it declares: found by name, listed in the
  /// error, its scenarios those it adopts, its known differences its own.
  @Test func aSystemAddedToTheListIsASideByWhatItDeclares() throws {
    // Its own differences, told apart from the shipped ones (.linux has no entry today).
    let known = KnownDifferences(
      entries: [.init(scenario: "healthy-baseline", item: "verdict", section: "T1", why: "a test")],
      document: "a test")
    let fake = TestedSystem(
      name: "bitchat-fake", summary: "a test's trivial bitchat code", waitsInRealTime: true,
      comparison: TestedSystemComparison(heldAgainst: [.init(.bitchat, known: known)]),
      adopt: { $0.app.profile == .bitchat ? $0 : nil },
      prepare: { scenarios, _ in TestedSystemSetup(scenarios: scenarios) })
    let systems = TestedSystems.all + [fake]
    #expect(ComparisonSide.names(in: systems).last == "bitchat-fake")
    let sides = try LeakAuditCompare.parseSides("bitchat,bitchat-fake", in: systems)
    #expect(sides.b.system.waitsInRealTime && !sides.a.system.waitsInRealTime)
    #expect(sides.a.knownDifferences(with: sides.b) == known)
    let compared = LeakAuditCompare.comparable(Self.library(), a: sides.a, b: sides.b)
    #expect(!compared.isEmpty && compared.allSatisfy { $0.app.profile == .bitchat })
    #expect(throws: UsageError.self) { try Self.sides("bitchat,bitchat-fake") }
  }
}
