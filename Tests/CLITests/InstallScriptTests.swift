import FailClosedSupport
import Foundation
import TestSupport
import Testing

/// tools/install: the binary lands in PREFIX/bin and runs from there, and the completions it
/// installs load in bash and complete a command. Installs the binary `swift build` made
/// (--binary), so the test builds nothing.
@Suite struct InstallScriptTests {
  @Test(
    .needsFailclosedBinary)
  func installPutsFailclosedAndItsCompletionsUnderThePrefix() throws {
    let binary = try #require(FailclosedBinary.built)
    let prefix = try RepositoryFiles.temporaryDirectory() + "/prefix with space"
    defer { try? FileManager.default.removeItem(atPath: prefix) }
    let result = try RepositoryFiles.run(
      "/bin/bash",
      [RepositoryFiles.path("tools/install"), "--no-deps", "--binary", binary, "--prefix", prefix])
    #expect(result.status == 0, "\(result.output)")
    let installed = prefix + "/bin/failclosed"
    let version = try RepositoryFiles.run(installed, ["--version"])
    #expect(version.status == 0)
    #expect(version.output.hasPrefix("failclosed "))
    #expect(version.output.contains("libpcap version"))
    let completion = prefix + "/share/bash-completion/completions/failclosed"
    let program = """
      source '\(completion)'
      COMP_WORDS=(failclosed leak-a); COMP_CWORD=1; _failclosed
      echo "${COMPREPLY[*]}"
      """
    let completed = try RepositoryFiles.run("/bin/bash", ["--norc", "-c", program])
    #expect(completed.output == "leak-audit\n")
    #expect(
      FileManager.default.fileExists(atPath: prefix + "/share/zsh/site-functions/_failclosed"))
  }

  @Test func anUnknownOptionIsRefusedBeforeAnythingHappens() throws {
    let result = try RepositoryFiles.run(
      "/bin/bash", [RepositoryFiles.path("tools/install"), "--prefx", "/tmp/x"])
    #expect(result.status == 2)
    #expect(result.output.contains("unknown option '--prefx'"))
  }
}
