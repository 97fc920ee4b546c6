import Testing

@testable import BitchatSource

/// git in a repository a test makes (its own user, no signing); the output trimmed. A failing
/// git call is a failed expectation naming its arguments.
func git(in root: String, _ arguments: [String]) throws -> String {
  let result = try BitchatHistory.run(
    "/usr/bin/git",
    ["-C", root, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
      + arguments)
  #expect(result.status == 0, "git \(arguments): \(result.text)")
  return result.text.trimmingCharacters(in: .whitespacesAndNewlines)
}
