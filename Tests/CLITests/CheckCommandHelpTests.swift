import Testing

@testable import FailClosedCLI

/// `failclosed check` is listed, and its help says what it checks and what --mutate does.
@Suite struct CheckCommandHelpTests {
  @Test func checkIsACommandWithItsMutateOption() throws {
    #expect(FailClosedMain.commands.contains { $0.name == "check" })
    let listed = FailClosedMain.helpText().split(separator: "\n").first {
      $0.hasPrefix("  check ")
    }
    #expect(
      listed?.hasSuffix("validate scenario files (no root); --mutate: prove their faults matter")
        == true)
    let help = CheckCommand().helpText
    #expect(help.contains("Usage: failclosed check [PATH ...] [--mutate]"))
    #expect(help.contains("--mutate"))
    #expect(help.contains("leak-audit runs the same checks first"))
  }
}
