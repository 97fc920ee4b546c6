import FailClosedCLI
import FailClosedSupport
import Testing

@Suite struct MockTorControlOptionsTests {
  func parse(_ arguments: [String]) throws -> ParsedArguments {
    try ArgumentParser.parse(arguments, options: MockTorCommand().options)
  }

  @Test func controlAuthNeedsAControlPort() throws {
    let parsed = try parse(["--control-auth", "password:x"])
    #expect(throws: UsageError("--control-auth: needs --control-port")) {
      _ = try MockTorCommand.configuration(from: parsed)
    }
  }

  @Test func controlOptionsParse() throws {
    let parsed = try parse(["--control-port", "39051", "--control-auth", "cookie:/tmp/c"])
    #expect(try MockTorCommand.configuration(from: parsed).controlPort == 39051)
    #expect(parsed.value("control-auth") == "cookie:/tmp/c")
    #expect(MockTorCommand().helpText.contains("--control-auth none|password:SECRET|cookie:FILE"))
  }
}
