import Testing

@testable import FailClosedCLI

/// `failclosed check` is listed, and its help says what it checks and what --mutate does.
@Suite struct CheckCommandHelpTests {
  @Test func checkIsACommandWithItsMutateOption() throws {
    #expect(FailClosedMain.commands.contains { $0.name == "check" })
    #expect(FailClosedMain.helpText().contains("check       validate scenario files (no root)"))
    let help = CheckCommand().helpText
    #expect(help.contains("Usage: failclosed check [PATH ...] [--mutate]"))
    #expect(help.contains("--mutate"))
    #expect(help.contains("leak-audit runs the same checks first"))
  }
}
