import Foundation
import Testing

/// tools/install-deps: runtime apart from test-only packages, services held back during the
/// install, and a tor already on the machine never stopped, disabled or killed. Driven with
/// stand-ins for apt-get, apt-cache, dpkg-query and systemctl on PATH, which record what the
/// script asked for; the policy-rc.d it writes is run as invoke-rc.d would run it.
@Suite struct InstallDepsScriptTests {
  static let script = RepositoryFiles.path("tools/install-deps")

  /// The shims: `PRESENT` lists installed packages, `ABSENT` packages the distribution lacks.
  static let shims: [String: String] = [
    "dpkg-query": """
    #!/bin/sh
    for name in $PRESENT; do [ "$name" = "$3" ] && { echo "install ok installed"; exit 0; }; done
    exit 1
    """,
    "apt-cache": """
    #!/bin/sh
    for name in $ABSENT; do [ "$name" = "$3" ] && exit 100; done
    exit 0
    """,
    "apt-get": """
    #!/bin/sh
    [ "$1" = update ] && exit 0
    shift 3
    echo "install $*" >> "$LOG"
    "$FAILCLOSED_POLICY_RC_D" tor start; echo "policy-rc.d tor start: $?" >> "$LOG"
    """,
    "debconf-set-selections": "#!/bin/sh\ncat >/dev/null\n",
    "systemctl": "#!/bin/sh\necho \"systemctl $*\" >> \"$LOG\"\n",
    "sudo": "#!/bin/sh\nexec \"$@\"\n",
    "pkill": "#!/bin/sh\necho \"FORBIDDEN pkill $*\" >> \"$LOG\"\n",
    "killall": "#!/bin/sh\necho \"FORBIDDEN killall $*\" >> \"$LOG\"\n",
    "service": "#!/bin/sh\necho \"FORBIDDEN service $*\" >> \"$LOG\"\n",
    "invoke-rc.d": "#!/bin/sh\necho \"FORBIDDEN invoke-rc.d $*\" >> \"$LOG\"\n",
  ]

  struct Outcome {
    let status: Int32
    let output: String
    let log: [String]
    let policyAfter: String?
    var installed: [String] {
      log.first { $0.hasPrefix("install ") }.map { $0.split(separator: " ").dropFirst() }
        .map { $0.map(String.init) } ?? []
    }
  }

  static func run(
    _ arguments: [String], present: [String] = [], absent: [String] = [],
    existingPolicy: String? = nil
  ) throws -> Outcome {
    let directory = try RepositoryFiles.temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let bin = directory + "/bin"
    try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
    for (name, text) in shims {
      try RepositoryFiles.writeExecutable(text, to: bin + "/" + name)
    }
    // A venv that already holds the PyPI tools, so --test installs nothing from PyPI here.
    let venv = directory + "/venv"
    try FileManager.default.createDirectory(
      atPath: venv + "/bin", withIntermediateDirectories: true)
    try RepositoryFiles.writeExecutable("#!/bin/sh\n", to: venv + "/bin/check-jsonschema")
    let policy = directory + "/policy-rc.d"
    if let existingPolicy {
      try existingPolicy.write(toFile: policy, atomically: true, encoding: .utf8)
    }
    let log = directory + "/log"
    _ = FileManager.default.createFile(atPath: log, contents: nil)
    let environment = [
      "PATH": bin + ":/usr/bin:/bin", "LOG": log, "PRESENT": present.joined(separator: " "),
      "ABSENT": absent.joined(separator: " "), "FAILCLOSED_POLICY_RC_D": policy,
      "FAILCLOSED_TEST_VENV": venv,
    ]
    let result = try RepositoryFiles.run(
      "/bin/bash", [script] + arguments, environment: environment)
    let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
      .map(String.init)
    return Outcome(
      status: result.status, output: result.output, log: lines,
      policyAfter: try? String(contentsOfFile: policy, encoding: .utf8))
  }

  @Test func theDefaultInstallsWhatRunningNeedsAndNothingOfTheTestSuite() throws {
    let outcome = try Self.run([])
    #expect(outcome.status == 0, "\(outcome.output)")
    let installed = Set(outcome.installed)
    for package in ["libpcap-dev", "libssl-dev", "pkg-config", "iproute2", "nftables", "tor"] {
      #expect(installed.contains(package), "\(package) missing from \(installed)")
    }
    #expect(installed.contains("obfs4proxy"))
    for package in ["chromium", "tshark", "python3-stem", "python3-jsonschema", "torsocks"] {
      #expect(!installed.contains(package), "\(package) is test-only")
    }
  }

  @Test func testAddsTheTestSuitesPackages() throws {
    let outcome = try Self.run(["--test"])
    #expect(outcome.status == 0, "\(outcome.output)")
    let installed = Set(outcome.installed)
    for package in ["tor", "chromium", "tshark", "python3-stem", "python3-jsonschema"] {
      #expect(installed.contains(package), "\(package) missing from \(installed)")
    }
    #expect(!installed.contains("microsocks"))
  }

  @Test func aNameTheDistributionLacksFallsBackToItsAlternative() throws {
    let outcome = try Self.run(["--test"], absent: ["obfs4proxy", "bind9-dnsutils"])
    #expect(outcome.status == 0, "\(outcome.output)")
    #expect(outcome.installed.contains("lyrebird"))
    #expect(outcome.installed.contains("dnsutils"))
    #expect(!outcome.installed.contains("obfs4proxy"))
  }

  @Test func aPackageNoAlternativeProvidesIsAnErrorNamingIt() throws {
    let outcome = try Self.run([], absent: ["nftables"])
    #expect(outcome.status != 0)
    #expect(outcome.output.contains("no package named nftables"))
    #expect(outcome.installed.isEmpty)
  }

  @Test func servicesAreHeldBackDuringTheInstallAndTheOldPolicyIsPutBack() throws {
    let old = "#!/bin/sh\n# the container's own\nexit 101\n"
    let outcome = try Self.run([], existingPolicy: old)
    #expect(outcome.log.contains("policy-rc.d tor start: 101"), "\(outcome.log)")
    #expect(outcome.policyAfter == old)
    let fresh = try Self.run([])
    #expect(fresh.log.contains("policy-rc.d tor start: 101"))
    #expect(fresh.policyAfter == nil, "the script's policy-rc.d must not outlive the install")
  }

  @Test func aTorThatWasThereBeforeIsLeftAlone() throws {
    let outcome = try Self.run([], present: ["tor"])
    #expect(outcome.status == 0, "\(outcome.output)")
    #expect(!outcome.installed.contains("tor"))
    #expect(outcome.log.filter { $0.hasPrefix("systemctl") || $0.hasPrefix("FORBIDDEN") } == [])
    // A tor this run installed is only kept off at boot: never stopped.
    let fresh = try Self.run([])
    let systemctl = fresh.log.filter { $0.hasPrefix("systemctl") }
    #expect(systemctl == ["systemctl disable tor"])
    #expect(!fresh.log.contains { $0.hasPrefix("FORBIDDEN") })
  }

  @Test func theScriptNeverStopsOrKillsAnything() throws {
    let code = try RepositoryFiles.text("tools/install-deps").split(separator: "\n")
      .map { $0.split(separator: "#", maxSplits: 1).first.map(String.init) ?? "" }
      .joined(separator: "\n")
    for forbidden in [
      "pkill", "killall", "kill ", "systemctl stop", "--now", "service tor", "invoke-rc.d",
      "systemctl restart", "systemctl mask",
    ] {
      #expect(!code.contains(forbidden), "tools/install-deps contains '\(forbidden)'")
    }
    #expect(code.contains("/usr/sbin/policy-rc.d"))
  }

  @Test func allPackagesPresentInstallsNothing() throws {
    let everything = [
      "libpcap-dev", "libssl-dev", "pkg-config", "iproute2", "nftables", "tor", "obfs4proxy",
      "curl", "ca-certificates",
    ]
    let outcome = try Self.run([], present: everything)
    #expect(outcome.status == 0)
    #expect(outcome.log.isEmpty, "\(outcome.log)")
    #expect(outcome.output.contains("every package is already installed (9 checked, run)"))
  }
}
