import FailClosedSupport
import Foundation
import TestSupport
import Testing

@testable import BitchatSource

/// bitchat's own test files as `failclosed bitchat-tests` finds them in the pinned checkout.
@Suite(
  .needsBitchatCheckout)
struct BitchatTestFilesTests {
  @Test func findsEveryTestFileByPathWithItsFrameworkAndTests() throws {
    try #require(
      FileManager.default.fileExists(atPath: pinnedCheckout), "no checkout at \(pinnedCheckout)")
    let tests = try BitchatTestFiles(tree: try BitchatTree(root: pinnedCheckout))
    #expect(tests.absentOptional.isEmpty)
    let frameworks = Dictionary(uniqueKeysWithValues: tests.files.map { ($0.name, $0.framework) })
    #expect(frameworks["GeoRelayDirectoryTests.swift"] == .xctest)
    #expect(frameworks["NostrRelayManagerTests.swift"] == .xctest)
    #expect(frameworks["NostrRelaySettingsTests.swift"] == .swiftTesting)
    #expect(frameworks["TorPreferenceReadTests.swift"] == .swiftTesting)
    #expect(frameworks["TestConstants.swift"] == .support)
    let names = Set(tests.allTests.map(\.name))
    // A synchronous and an async XCTest case, a @MainActor-attributed one, a Swift Testing one.
    #expect(
      names.contains(
        "GeoRelayDirectoryTests.test_parseCSV_normalizesSecureRelaySchemesAndDeduplicatesEntries"))
    #expect(
      names.contains(
        "NostrRelayManagerTests.test_connect_waitsForTorReadinessBeforeCreatingSessions"))
    #expect(
      names.contains("NostrRelayManagerTests.testAddedRelayJoinsTheTargetSetOnSettingsChange"))
    #expect(names.contains("NostrRelaySettingsTests.addNormalizesABareHostname()"))
    // Helpers and mocks are not tests.
    #expect(!names.contains { $0.contains("waitUntil") || $0.contains("makeHarness") })
    #expect(!names.contains { $0.hasPrefix("MockRelaySessionFactory.") })
    let manager = tests.files.first { $0.name == "NostrRelayManagerTests.swift" }
    let connect = manager?.suites.first?.tests.first {
      $0.name == "test_connect_doesNothingWhenActivationIsDisallowed"
    }
    #expect(connect?.isAsync == false)
    #expect(manager?.suites.first?.tests.first?.isAsync == true)
    #expect(tests.allTests.count == 114)
  }

  @Test func anOptionalTestFileMayBeAbsentAndTestConstantsMayNot() throws {
    let copy = try copyOfCheckoutWithTests()
    defer { try? FileManager.default.removeItem(atPath: copy) }
    try FileManager.default.removeItem(
      atPath: copy + "/bitchatTests/Services/TorPreferenceReadTests.swift")
    let tests = try BitchatTestFiles(tree: try BitchatTree(root: copy))
    #expect(tests.absentOptional == ["bitchatTests/Services/TorPreferenceReadTests.swift"])
    // A test whose subject is absent is left out with it.
    try FileManager.default.removeItem(atPath: copy + "/bitchat/Nostr/NostrRelaySettings.swift")
    let fewer = try BitchatTestFiles(tree: try BitchatTree(root: copy))
    #expect(fewer.absentOptional.contains("bitchatTests/Nostr/NostrRelaySettingsTests.swift"))
    // None of the Tor layer's tests (bitchat before it had them): said so, not "missing".
    let bare = try copyOfCheckoutWithTests()
    defer { try? FileManager.default.removeItem(atPath: bare) }
    let optional = BitchatTestFiles.expected.filter { !$0.required }.map(\.path)
    for path in optional { try? FileManager.default.removeItem(atPath: bare + "/" + path) }
    #expect(throws: BitchatSourceError.noTorLayerTests(root: bare, looked: optional)) {
      try BitchatTestFiles(tree: try BitchatTree(root: bare))
    }
    try FileManager.default.removeItem(
      atPath: copy + "/bitchatTests/TestUtilities/TestConstants.swift")
    #expect(
      throws: BitchatSourceError.missingFile(
        root: copy, path: "bitchatTests/TestUtilities/TestConstants.swift")
    ) { try BitchatTestFiles(tree: try BitchatTree(root: copy)) }
  }

  /// The known-unrunnable list names only tests that exist at the pinned commit.
  @Test func everyNotRunnableEntryNamesATestOfThePinnedCommit() throws {
    let tests = try BitchatTestFiles(tree: try BitchatTree(root: pinnedCheckout))
    let names = Set(tests.allTests.map(\.name))
    for entry in BitchatNotRunnableTest.linux {
      #expect(names.contains(entry.name), "\(entry.name) is listed but no test has that name")
      #expect(!entry.reason.isEmpty, "\(entry.name) is listed without a reason")
    }
  }

  @Test func theRegistrationRunsSyncTestsOnTheMainActorAndAsyncOnesThroughAsyncTest() throws {
    let tests = try BitchatTestFiles(tree: try BitchatTree(root: pinnedCheckout))
    let source = XCTestRegistration.mainSource(tests.files)
    #expect(
      source.contains(
        #"("test_connect_doesNothingWhenActivationIsDisallowed", { (test: NostrRelayManagerTests) in { try MainActor.assumeIsolated { try test.test_connect_doesNothingWhenActivationIsDisallowed() } } }),"#
      ))
    #expect(
      source.contains(
        #"("test_fetchSuccess_postsDirectoryRefreshNotification", asyncTest { (test: GeoRelayDirectoryTests) in { try await test.test_fetchSuccess_postsDirectoryRefreshNotification() } }),"#
      ))
    // Swift Testing's tests are not registered with XCTest.
    #expect(!source.contains("addNormalizesABareHostname"))
  }
}

/// The pinned checkout's lane files and test files, copied unmodified into a temporary tree.
func copyOfCheckoutWithTests() throws -> String {
  let copy = try copyOfCheckout()
  for entry in BitchatTestFiles.expected {
    let target = copy + "/" + entry.path
    try FileManager.default.createDirectory(
      atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: pinnedCheckout + "/" + entry.path, toPath: target)
  }
  return copy
}

/// Outcomes held against the not-runnable list, and the runners' reports parsed.
struct BitchatTestsReportTests {
  static let tests = BitchatTestFiles(
    root: "/checkout",
    files: [
      BitchatTestFiles.read(
        "bitchatTests/A/OneTests.swift",
        """
        import XCTest
        @testable import bitchat

        @MainActor
        final class OneTests: XCTestCase {
            func test_passes() {}
            func test_fails() async {}
            func test_cannotRunHere() {}
            func test_nowRuns() {}
            func test_crashedBefore() {}
            private func helper() {}
        }

        private final class Mock {
            func test_notATest() {}
        }
        """),
      BitchatTestFiles.read(
        "bitchatTests/B/TwoTests.swift",
        """
        import Testing
        @testable import bitchat

        struct TwoTests {
            @Test func works() {}
            @Test("named") func alsoWorks() async throws {}
        }
        """),
    ], absentOptional: [])

  @Test func theListIsCheckedAndFailuresAreShims() {
    let outcomes = [
      BitchatTestOutcome(name: "OneTests.test_passes", passed: true),
      BitchatTestOutcome(name: "OneTests.test_fails", passed: false, failures: ["x.swift:3: boom"]),
      BitchatTestOutcome(name: "OneTests.test_cannotRunHere", passed: false),
      BitchatTestOutcome(name: "OneTests.test_nowRuns", passed: true),
      BitchatTestOutcome(name: "TwoTests.works()", passed: true),
      BitchatTestOutcome(name: "TwoTests.alsoWorks()", passed: true),
    ]
    let list = [
      BitchatNotRunnableTest("OneTests.test_cannotRunHere", reason: "needs CoreBluetooth"),
      BitchatNotRunnableTest("OneTests.test_nowRuns", reason: "was broken"),
      BitchatNotRunnableTest("OneTests.test_gone", reason: "renamed upstream"),
    ]
    let report = BitchatTestsReport(tests: Self.tests, outcomes: outcomes, notRunnableList: list)
    #expect(!report.passed)
    let one = report.files.first { $0.file == "bitchatTests/A/OneTests.swift" }
    #expect(
      one
        == BitchatTestsReport.FileCounts(
          file: "bitchatTests/A/OneTests.swift", passed: 2, failed: 1, notRunnable: 1, notRun: 1))
    let two = report.files.first { $0.file == "bitchatTests/B/TwoTests.swift" }
    #expect(two?.passed == 2)
    #expect(report.failures.map(\.name) == ["OneTests.test_fails"])
    #expect(report.notRunnable.map(\.name) == ["OneTests.test_cannotRunHere"])
    #expect(report.notRun == ["OneTests.test_crashedBefore"])
    #expect(report.listFaults.count == 2)
    let text = report.text
    #expect(
      text.contains(
        "FAIL OneTests.test_fails (bitchatTests/A/OneTests.swift): a shim or stand-in is wrong"))
    #expect(text.contains("  x.swift:3: boom"))
    #expect(text.contains("NOT RUNNABLE ON LINUX OneTests.test_cannotRunHere: needs CoreBluetooth"))
    #expect(
      text.contains("LIST OneTests.test_nowRuns is listed as not runnable on Linux but passed"))
    #expect(
      text.contains(
        "LIST OneTests.test_gone is listed as not runnable on Linux, but no test has that name"))
    #expect(text.contains("NOT RUN 1"))
  }

  @Test func aListedTestThatStillFailsKeepsTheRunGreen() {
    let outcomes =
      [
        "OneTests.test_passes", "OneTests.test_fails", "OneTests.test_nowRuns",
        "OneTests.test_crashedBefore", "TwoTests.works()", "TwoTests.alsoWorks()",
      ].map { BitchatTestOutcome(name: $0, passed: true) } + [
        BitchatTestOutcome(name: "OneTests.test_cannotRunHere", passed: false)
      ]
    let report = BitchatTestsReport(
      tests: Self.tests, outcomes: outcomes,
      notRunnableList: [
        BitchatNotRunnableTest("OneTests.test_cannotRunHere", reason: "needs UIKit")
      ])
    #expect(report.passed)
    #expect(report.totalPassed == 6)
    #expect(report.notRunnable.map(\.reason) == ["needs UIKit"])
    #expect(report.text.contains("total"))
  }

  @Test func theRunnersReportsParse() {
    let xctest = """
      {"name":"OneTests.test_passes","passed":true,"seconds":0.5,"failures":[]}
      {"name":"OneTests.test_fails","passed":false,"seconds":1,"failures":["a.swift:2: XCTAssertTrue failed"]}
      {"name":"OneTests.test_cut
      """
    #expect(
      BitchatTestOutcome.parseXCTest(xctest) == [
        BitchatTestOutcome(name: "OneTests.test_passes", passed: true, seconds: 0.5),
        BitchatTestOutcome(
          name: "OneTests.test_fails", passed: false, seconds: 1,
          failures: ["a.swift:2: XCTAssertTrue failed"]),
      ])
    let xunit = """
      <?xml version="1.0" encoding="UTF-8"?>
      <testsuites>
        <testsuite name="TestResults" errors="0" tests="2" failures="1" skipped="0" time="0.04">
          <testcase classname="bitchatTests.TwoTests" name="works()" time="0.01" />
          <testcase classname="bitchatTests.TwoTests" name="alsoWorks()" time="0.02">
            <failure message="Expectation failed: (a &quot;b&quot;) &amp; c" />
          </testcase>
        </testsuite>
      </testsuites>
      """
    #expect(
      BitchatTestOutcome.parseXUnit(xunit) == [
        BitchatTestOutcome(name: "TwoTests.works()", passed: true, seconds: 0.01),
        BitchatTestOutcome(
          name: "TwoTests.alsoWorks()", passed: false, seconds: 0.02,
          failures: [#"Expectation failed: (a "b") & c"#]),
      ])
  }
}

/// The command on the pinned tree: builds bitchat's tests (cached with the lane's test cache),
/// runs them in the sandbox, prints the counts per file and the audit. CI runs it.
@Suite(
  .serialized,
  .needsRoot,
  .needsBitchatCheckout)
struct BitchatTestsCommandTests {
  @Test func everyTestOfThePinnedCommitPassesAndNothingLeavesTheDevice() throws {
    try #require(
      FileManager.default.fileExists(atPath: pinnedCheckout), "no checkout at \(pinnedCheckout)")
    try #require(
      FailclosedBinary.built != nil, "no \(FailclosedBinary.path)")
    let result = try buildLock.withLock {
      try runFailclosed([
        "bitchat-tests", "--bitchat-src", pinnedCheckout, "--cache",
        (testCacheRoot as NSString).deletingLastPathComponent,
      ])
    }
    #expect(result.status == 0, "\(result.output)")
    let lines = result.output.split(separator: "\n").map(String.init)
    func row(_ file: String) -> [String]? {
      lines.first { $0.hasPrefix(file + " ") }?.split(separator: " ").map(String.init)
    }
    // file, pass, fail, not runnable, not run: bitchat's counts at the pinned commit.
    let expected: [(String, String)] = [
      ("bitchatTests/Nostr/GeoRelayDirectoryTests.swift", "15"),
      ("bitchatTests/Nostr/NostrRelaySettingsTests.swift", "10"),
      ("bitchatTests/Services/NetworkActivationServiceTests.swift", "10"),
      ("bitchatTests/Services/NetworkReachabilityGateTests.swift", "10"),
      ("bitchatTests/Services/NostrRelayManagerTests.swift", "66"),
      ("bitchatTests/Services/TorPreferenceReadTests.swift", "3"),
      ("total", "114"),
    ]
    for (file, passed) in expected {
      #expect(row(file) == [file, passed, "0", "0", "0"], "\(result.output)")
    }
    #expect(result.output.contains("PASS: nothing left the device outside the policy"))
    #expect(result.output.contains("0 leak"))
  }

  /// BIP-340's and NIP-44's own vectors, with canaries, on the stand-ins' cryptography.
  @Test func theStandInsCryptographyMatchesTheSpecificationsVectors() throws {
    let built = try buildLock.withLock {
      try BitchatSourceLocation.prepareTests(
        bitchatSource: pinnedCheckout, cacheRoot: testCacheRoot, progress: { _ in })
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: built.package.standInChecksPath)
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    var names: [String] = []
    for line in output.split(separator: "\n") {
      let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
      let name = object?["check"] as? String ?? "?"
      names.append(name)
      #expect(object?["ok"] as? Bool == true, "\(name): \(object?["detail"] ?? "")")
    }
    #expect(process.terminationStatus == 0)
    for prefix in [
      "BIP-340 vector 0: signature", "BIP-340 vector 1: signature", "BIP-340: canary",
      "NIP-44 conversation key 1", "NIP-44 encrypt", "NostrEvent: canary",
    ] {
      #expect(names.contains { $0.hasPrefix(prefix) }, "no check \(prefix)")
    }
  }

  @Test func aTestFileUsingASymbolNoShimProvidesIsNamed() throws {
    let tree = try temporaryDirectory("unknown-test-symbol")
    defer { try? FileManager.default.removeItem(atPath: tree) }
    let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().path + "/Fixtures/"
    // The lane's minimal tree, then this test's files over it (a TorManager that compiles).
    for fixture in ["unknown-symbol-tree", "unknown-test-symbol-tree"] {
      let enumerator = FileManager.default.enumerator(atPath: fixtures + fixture)!
      while let path = enumerator.nextObject() as? String {
        guard path.hasSuffix(".swift.txt") else { continue }
        let target = tree + "/" + String(path.dropLast(4))
        try FileManager.default.createDirectory(
          atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: target)
        try FileManager.default.copyItem(atPath: fixtures + fixture + "/" + path, toPath: target)
      }
    }
    let result = try runFailclosed([
      "bitchat-tests", "--bitchat-src", tree, "--cache", tree + "/cache",
    ])
    #expect(result.status == 2, "\(result.output)")
    #expect(
      result.output.contains(
        tree
          + "/bitchatTests/Services/TorPreferenceReadTests.swift:8: 'NWBrowser' is provided by no shim: "
          + "the Network shim (BitchatShims/Network) lacks it"),
      "\(result.output)")
  }
}

/// The command's options: bad input is a usage error naming the option (exit 2, nothing built).
@Suite(
  .needsFailclosedBinary)
struct BitchatTestsOptionTests {
  @Test func aStrayWordABadTimeoutOrAMissingCheckoutIsNamed() throws {
    try #require(
      FailclosedBinary.built != nil, "no \(FailclosedBinary.path)")
    let stray = try runFailclosed(["bitchat-tests", "build"])
    #expect(stray.status == 2)
    #expect(stray.output.contains("unexpected 'build': bitchat-tests takes options only"))
    let timeout = try runFailclosed(["bitchat-tests", "--timeout", "0"])
    #expect(timeout.status == 2)
    #expect(
      timeout.output.contains("--timeout: expected a number of seconds from 1 to 86400, got '0'"))
    let missing = NSTemporaryDirectory() + "fc-no-bitchat-\(getpid())"
    let result = try runFailclosed(["bitchat-tests", "--bitchat-src", missing])
    #expect(result.status == 2)
    #expect(result.output.contains("no bitchat checkout at \(missing)"))
  }
}
