import FailClosedCLI
import FailClosedSupport
import Testing

@Suite struct MockTorCommandTests {
  func configuration(_ arguments: [String]) throws -> MockTorConfigurationSummary {
    let parsed = try ArgumentParser.parse(arguments, options: MockTorCommand().options)
    let configuration = try MockTorCommand.configuration(from: parsed)
    return MockTorConfigurationSummary(
      personality: configuration.personality.rawValue,
      listen: configuration.socksAddress.description,
      hosts: configuration.destinations.hosts,
      faults: configuration.faults.mapValues(\.description),
      plan: configuration.bootstrapPlan.description, controlPort: configuration.controlPort)
  }

  @Test func defaultsAndEveryOption() throws {
    let defaults = try configuration([])
    #expect(defaults.personality == "ctor")
    #expect(defaults.listen == "127.0.0.1:39050")
    let full = try configuration([
      "--personality", "arti", "--listen", "127.0.0.2:9150", "--map", "web.test=127.0.0.1:8080",
      "--map", "x.onion=127.0.0.1:0", "--fault", "web.test=latency=200,reply=0x05",
      "--bootstrap-plan", "healthy:2", "--time-scale", "10",
    ])
    #expect(full.personality == "arti")
    #expect(full.listen == "127.0.0.2:9150")
    #expect(full.hosts == ["web.test", "x.onion"])
    #expect(full.faults == ["web.test": "reply=0x5,latency=200"])
    #expect(full.plan == "healthy:2")
  }

  @Test func errorsNameTheOption() {
    let cases: [([String], String)] = [
      (["--personality", "tor"], "--personality"),
      (["--listen", "10.0.0.1:9050"], "--force-non-loopback"),
      (["--listen", "nonsense"], "--listen"),
      (["--map", "web.test=8.8.8.8:80"], "--map"),
      (["--map", "web.test"], "--map"),
      (["--fault", "web.test=latency=fast"], "--fault"),
      (["--fault", "web.test=explode"], "unknown toxic"),
      (["--time-scale", "0"], "--time-scale"),
      (["--personality", "arti", "--control-port", "9051"], "--control-port"),
      (["--epoch", "soon"], "--epoch"),
      (["--epoch", "-5"], "--epoch"),
      (["--epoch", MonotonicInstant.now.advanced(bySeconds: 7200).description], "ahead of now"),
    ]
    for (arguments, mention) in cases {
      #expect(throws: (any Error).self, "\(arguments)") { try configuration(arguments) }
      do {
        _ = try configuration(arguments)
      } catch {
        #expect("\(error)".contains(mention), "\(arguments): \(error)")
      }
    }
  }

  @Test func helpListsEveryOption() {
    let help = MockTorCommand().helpText
    for option in MockTorCommand().options {
      #expect(help.contains("--\(option.name)"))
    }
    #expect(FailClosedMain.commands.contains { $0.name == "mock-tor" })
  }
}

struct MockTorConfigurationSummary: Equatable {
  var personality: String
  var listen: String
  var hosts: [String]
  var faults: [String: String]
  var plan: String
  var controlPort: UInt16?
}
