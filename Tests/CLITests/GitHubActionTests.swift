import FailClosedSupport
import Foundation
import TestSupport
import Testing

/// action.yml and the example workflow, checked with GitHub's action and workflow JSON schemas
/// as PyPI's check-jsonschema ships them (vendored: no network), each with a broken copy that
/// must be refused; and the action's leak-audit step run as a runner would, with stand-ins for
/// sudo and failclosed, to see the arguments it builds from its inputs.
@Suite struct GitHubActionTests {
  /// tools/install-deps --test installs check-jsonschema into this venv.
  static let venv =
    ProcessInfo.processInfo.environment["FAILCLOSED_TEST_VENV"]
    ?? "/opt/failclosed-test-venv"
  static var checker: String { venv + "/bin/check-jsonschema" }
  static var python: String { venv + "/bin/python" }
  static var available: Bool { FileManager.default.isExecutableFile(atPath: checker) }

  static func check(_ schema: String, _ file: String) throws -> (status: Int32, output: String) {
    try RepositoryFiles.run(checker, ["--builtin-schema", schema, file])
  }

  /// A copy of a repository file with one change, in a temporary directory.
  static func mutated(_ relative: String, _ old: String, _ new: String) throws -> String {
    let text = try RepositoryFiles.text(relative)
    #expect(text.contains(old), "\(relative) no longer contains '\(old)'")
    let path =
      try RepositoryFiles.temporaryDirectory() + "/" + (relative as NSString).lastPathComponent
    try text.replacingOccurrences(of: old, with: new).write(
      toFile: path, atomically: true, encoding: .utf8)
    return path
  }

  @Test(
    .needs("needs check-jsonschema (tools/install-deps --test)", if: available))
  func theActionMatchesGitHubsActionSchemaAndABrokenCopyDoesNot() throws {
    try #require(Self.available, "check-jsonschema and its venv (tools/install-deps --test)")
    let good = try Self.check("vendor.github-actions", RepositoryFiles.path("action.yml"))
    #expect(good.status == 0, "\(good.output)")
    // A composite run step needs a shell.
    let broken = try Self.mutated(
      "action.yml", "      shell: bash\n      run: sudo \"$GITHUB_ACTION_PATH/tools/install-deps\"",
      "      run: sudo \"$GITHUB_ACTION_PATH/tools/install-deps\"")
    let refused = try Self.check("vendor.github-actions", broken)
    #expect(refused.status != 0, "\(refused.output)")
  }

  @Test(
    .needs("needs check-jsonschema (tools/install-deps --test)", if: available))
  func theWorkflowMatchesGitHubsWorkflowSchemaAndABrokenCopyDoesNot() throws {
    try #require(Self.available, "check-jsonschema and its venv (tools/install-deps --test)")
    let workflow = "tools/leak-audit-workflow.example.yml"
    let good = try Self.check("vendor.github-workflows", RepositoryFiles.path(workflow))
    #expect(good.status == 0, "\(good.output)")
    let broken = try Self.mutated(workflow, "    runs-on: ubuntu-24.04\n", "")
    let refused = try Self.check("vendor.github-workflows", broken)
    #expect(refused.status != 0, "\(refused.output)")
  }

  /// The action's shape, checked with a schema of our own: the inputs the issue names, a
  /// composite run, the uploads; and the example workflow uses the action.
  @Test(
    .needs("needs check-jsonschema (tools/install-deps --test)", if: available))
  func theActionHasItsInputsAndTheWorkflowUsesIt() throws {
    try #require(Self.available, "check-jsonschema and its venv (tools/install-deps --test)")
    let directory = try RepositoryFiles.temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let actionSchema = """
      {"type": "object", "required": ["inputs", "runs"],
       "properties": {
         "inputs": {"type": "object", "required": ["lane", "shard", "filter", "bitchat-src"]},
         "runs": {"type": "object", "required": ["using", "steps"],
           "properties": {"using": {"const": "composite"},
             "steps": {"type": "array", "allOf": [
               {"contains": {"type": "object", "required": ["uses"],
                 "properties": {"uses": {"pattern": "^actions/upload-artifact@"}}}},
               {"contains": {"type": "object", "required": ["uses"],
                 "properties": {"uses": {"pattern": "^github/codeql-action/upload-sarif@"}}}},
               {"contains": {"type": "object", "required": ["uses"],
                 "properties": {"uses": {"pattern": "^actions/cache@"}}}}]}}}}}
      """
    let workflowSchema = """
      {"type": "object", "required": ["jobs"],
       "properties": {"jobs": {"type": "object", "additionalProperties": {
         "type": "object", "required": ["steps"],
         "properties": {"steps": {"type": "array", "contains": {
           "type": "object", "required": ["uses"], "properties": {"uses": {"const": "./"}}}}}}}}}
      """
    try actionSchema.write(toFile: directory + "/action.json", atomically: true, encoding: .utf8)
    try workflowSchema.write(
      toFile: directory + "/workflow.json", atomically: true, encoding: .utf8)
    let action = try RepositoryFiles.run(
      Self.checker,
      ["--schemafile", directory + "/action.json", RepositoryFiles.path("action.yml")])
    #expect(action.status == 0, "\(action.output)")
    let workflow = try RepositoryFiles.run(
      Self.checker,
      [
        "--schemafile", directory + "/workflow.json",
        RepositoryFiles.path("tools/leak-audit-workflow.example.yml"),
      ])
    #expect(workflow.status == 0, "\(workflow.output)")
  }

  /// Runs one step of the action (its `run` text, read from action.yml) in bash, as the
  /// runner would (`bash -e`), with `environment` and stand-ins on PATH; returns the step's
  /// GITHUB_OUTPUT and what a stand-in recorded in `$ARGS`, one argument a line.
  static func runStep(
    _ id: String, environment: [String: String], shims: [String: String]
  ) throws -> (outputs: String, arguments: [String]) {
    let directory = try RepositoryFiles.temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let extract = """
      import sys
      from ruamel.yaml import YAML
      action = YAML(typ="safe").load(open(sys.argv[1]))
      step = next(s for s in action["runs"]["steps"] if s.get("id") == sys.argv[2])
      sys.stdout.write(step["run"])
      """
    let script = try RepositoryFiles.run(
      Self.python, ["-c", extract, RepositoryFiles.path("action.yml"), id])
    #expect(script.status == 0, "\(script.output)")
    try script.output.write(toFile: directory + "/step.sh", atomically: true, encoding: .utf8)
    let bin = directory + "/bin"
    try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
    for (name, text) in shims {
      try RepositoryFiles.writeExecutable(text, to: bin + "/" + name)
    }
    var full = [
      "PATH": bin + ":/usr/bin:/bin", "ARGS": directory + "/args",
      "GITHUB_WORKSPACE": directory + "/workspace", "GITHUB_ACTION_PATH": "/action",
      "GITHUB_OUTPUT": directory + "/outputs",
    ]
    full.merge(environment) { _, new in new }
    let result = try RepositoryFiles.run(
      "/bin/bash", ["-e", directory + "/step.sh"], environment: full)
    #expect(result.status == 0, "step \(id) failed: \(result.output)")
    #expect(
      shims["failclosed"] == nil || FileManager.default.fileExists(atPath: directory + "/args"),
      "step \(id) never ran the failclosed stand-in: \(result.output)")
    let arguments = ((try? String(contentsOfFile: directory + "/args", encoding: .utf8)) ?? "")
      .split(separator: "\n").map(String.init)
    let outputs = (try? String(contentsOfFile: directory + "/outputs", encoding: .utf8)) ?? ""
    return (outputs, arguments)
  }

  /// The leak-audit step with stand-ins for sudo and failclosed (which exits 5: a leak; the
  /// step itself must not fail, so the summary and uploads still run).
  static func runAuditStep(_ inputs: [String: String]) throws -> (
    arguments: [String], outputs: String
  ) {
    var environment = [
      "LANE": "all", "SHARD": "", "FILTER": "", "BITCHAT_SRC": "", "SCENARIOS": "",
      "REPORT_DIR": "failclosed-reports", "KEEP_PCAPS": "false",
    ]
    environment.merge(inputs) { _, new in new }
    let shims = [
      "sudo": "#!/bin/sh\nexec \"$@\"\n",
      "failclosed": """
      #!/bin/sh
      [ "$1" = --version ] && exit 0
      for a in "$@"; do echo "$a"; done > "$ARGS"
      exit 5
      """,
    ]
    let result = try runStep("audit", environment: environment, shims: shims)
    return (result.arguments, result.outputs)
  }

  @Test(
    .needs("needs the test venv (tools/install-deps --test)", if: available))
  func swiftIsInstalledOnlyWhenTheRunnersIsOlderThanWanted() throws {
    try #require(Self.available, "check-jsonschema and its venv (tools/install-deps --test)")
    func decide(_ have: String?) throws -> String {
      var shims: [String: String] = [:]
      if let have {
        shims["swift"] = "#!/bin/sh\necho 'Swift version \(have) (swift-\(have)-RELEASE)'\n"
      }
      return try Self.runStep("swift", environment: ["WANTED": "6.3"], shims: shims).outputs
    }
    #expect(try decide("6.3.1") == "install=false\n")
    #expect(try decide("6.3") == "install=false\n")
    #expect(try decide("6.10") == "install=false\n")
    #expect(try decide("6.1.2") == "install=true\n")
    #expect(try decide("5.10.1") == "install=true\n")
  }

  @Test(
    .needs("needs the test venv (tools/install-deps --test)", if: available))
  func theAuditStepPassesItsInputsAndKeepsTheExitCode() throws {
    try #require(Self.available, "check-jsonschema and its venv (tools/install-deps --test)")
    let plain = try Self.runAuditStep([:])
    #expect(plain.arguments.first == "leak-audit")
    #expect(plain.arguments.contains("/action/Scenarios"))
    #expect(!plain.arguments.contains("--bitchat-src"))
    #expect(!plain.arguments.contains("--shard"))
    #expect(!plain.arguments.contains("--filter"))
    #expect(plain.outputs.contains("exit-code=5"))

    let full = try Self.runAuditStep([
      "LANE": "mock", "SHARD": "2/4", "FILTER": "stall", "BITCHAT_SRC": "bitchat",
      "KEEP_PCAPS": "true",
    ])
    let pairs = Dictionary(
      zip(full.arguments, full.arguments.dropFirst()).filter { $0.0.hasPrefix("--") },
      uniquingKeysWith: { first, _ in first })
    #expect(pairs["--lane"] == "mock")
    #expect(pairs["--shard"] == "2/4")
    #expect(pairs["--filter"] == "stall")
    #expect(pairs["--bitchat-src"] == "bitchat")
    #expect(pairs["--report"]?.hasSuffix("/workspace/failclosed-reports") == true)
    #expect(full.arguments.contains("--keep-pcaps"))
  }
}
