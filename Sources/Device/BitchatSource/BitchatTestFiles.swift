import Foundation

/// bitchat's own unit tests for its Tor layer in a checkout, found by path: which exist, which
/// framework each uses (XCTest or Swift Testing), and the test names each declares (read from
/// the source, to register XCTest cases and to check the not-runnable list against).
public struct BitchatTestFiles: Sendable {
  public enum Framework: String, Sendable {
    case xctest = "XCTest"
    case swiftTesting = "Swift Testing"
    case support
  }

  public struct File: Sendable, Hashable {
    /// Path relative to the checkout, e.g. `bitchatTests/Nostr/GeoRelayDirectoryTests.swift`.
    public let relativePath: String
    public let framework: Framework
    /// XCTestCase subclasses (XCTest) or suite types (Swift Testing) and their tests, in order.
    public let suites: [Suite]
    public var name: String { (relativePath as NSString).lastPathComponent }
  }

  public struct Suite: Sendable, Hashable {
    public let name: String
    public let tests: [Test]
  }

  public struct Test: Sendable, Hashable {
    /// `test_x` (XCTest) or `x()` (Swift Testing, as its xUnit report names it).
    public let name: String
    public let isAsync: Bool
  }

  /// The tests the command knows: (path, required, the bitchat file it tests). A test whose
  /// subject is absent from the checkout is left out with it.
  static let expected: [(path: String, required: Bool, subject: String?)] = [
    ("bitchatTests/TestUtilities/TestConstants.swift", true, nil),
    (
      "bitchatTests/Nostr/GeoRelayDirectoryTests.swift", false,
      "bitchat/Nostr/GeoRelayDirectory.swift"
    ),
    (
      "bitchatTests/Nostr/NostrRelaySettingsTests.swift", false,
      "bitchat/Nostr/NostrRelaySettings.swift"
    ),
    (
      "bitchatTests/Services/NetworkActivationServiceTests.swift", false,
      "bitchat/Services/NetworkActivationService.swift"
    ),
    (
      "bitchatTests/Services/NetworkReachabilityGateTests.swift", false,
      "bitchat/Services/NetworkReachabilityMonitor.swift"
    ),
    (
      "bitchatTests/Services/NostrRelayManagerTests.swift", false,
      "bitchat/Nostr/NostrRelayManager.swift"
    ),
    (
      "bitchatTests/Services/TorPreferenceReadTests.swift", false,
      "bitchat/Services/NetworkActivationService.swift"
    ),
  ]

  /// The relay list GeoRelayDirectoryTests reads beside the checkout's root (via #filePath).
  static let relayDirectory = "relays"

  public let root: String
  public let files: [File]
  /// Optional test files this checkout does not have (or whose subject it does not have).
  public let absentOptional: [String]

  init(root: String, files: [File], absentOptional: [String]) {
    self.root = root
    self.files = files
    self.absentOptional = absentOptional
  }

  public init(tree: BitchatTree) throws(BitchatSourceError) {
    root = tree.root
    var files: [File] = []
    var absent: [String] = []
    for entry in Self.expected {
      let path = tree.root + "/" + entry.path
      let subjectPresent = entry.subject.map { tree.has($0) } ?? true
      guard subjectPresent, let text = try? String(contentsOfFile: path, encoding: .utf8) else {
        if entry.required { throw .missingFile(root: tree.root, path: entry.path) }
        absent.append(entry.path)
        continue
      }
      files.append(Self.read(entry.path, text))
    }
    guard files.contains(where: { $0.framework != .support }) else {
      throw .noTorLayerTests(
        root: tree.root, looked: Self.expected.filter { !$0.required }.map(\.path))
    }
    self.files = files
    absentOptional = absent
  }

  public var hasRelayDirectory: Bool {
    FileManager.default.fileExists(atPath: root + "/" + Self.relayDirectory)
  }

  /// Every test, as `Suite.name`, with its file.
  public var allTests: [(file: String, name: String)] {
    files.flatMap { file in
      file.suites.flatMap { suite in
        suite.tests.map { (file.relativePath, suite.name + "." + $0.name) }
      }
    }
  }

  /// The file that declares `suite`.
  public func file(declaring suite: String) -> String? {
    files.first { $0.suites.contains { $0.name == suite } }?.relativePath
  }

  /// Reads one file: its framework from its imports, its suites and tests from declarations.
  static func read(_ path: String, _ text: String) -> File {
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let imports = Set(
      lines.compactMap { line -> String? in
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("import ") else { return nil }
        return trimmed.split(separator: " ").last.map(String.init)
      })
    let framework: Framework =
      imports.contains("XCTest") ? .xctest : imports.contains("Testing") ? .swiftTesting : .support
    var suites: [Suite] = []
    var current: (name: String, isSuite: Bool, tests: [Test])?
    var pendingTestAttribute = false
    func close() {
      if let current, current.isSuite {
        suites.append(Suite(name: current.name, tests: current.tests))
      }
    }
    for line in lines {
      if let (name, superclass) = typeDeclaration(line) {
        close()
        let isSuite = framework == .xctest ? superclass == "XCTestCase" : framework == .swiftTesting
        current = (name, isSuite, [])
        pendingTestAttribute = false
        continue
      }
      let trimmed = line.trimmingCharacters(in: .whitespaces)
      if trimmed.hasPrefix("@Test") { pendingTestAttribute = true }
      guard let function = functionName(trimmed), current != nil else { continue }
      let isAsync = trimmed.contains(") async")
      switch framework {
      case .xctest where function.hasPrefix("test") && trimmed.contains("\(function)()"):
        current?.tests.append(Test(name: function, isAsync: isAsync))
      case .swiftTesting where pendingTestAttribute:
        current?.tests.append(Test(name: function + "()", isAsync: isAsync))
      default: break
      }
      pendingTestAttribute = false
    }
    close()
    // Swift Testing: a type with no @Test is no suite.
    suites = suites.filter { !$0.tests.isEmpty || framework == .xctest }
    return File(relativePath: path, framework: framework, suites: suites)
  }

  /// `final class Name: XCTestCase {` -> (Name, XCTestCase); only declarations at the file's
  /// top level (no indentation).
  static func typeDeclaration(_ line: String) -> (String, String?)? {
    guard let first = line.first, !first.isWhitespace else { return nil }
    var words = line.split(whereSeparator: { $0 == " " || $0 == ":" || $0 == "{" || $0 == "<" })
      .map(String.init)
    while let word = words.first, word.hasPrefix("@") || modifiers.contains(word) {
      words.removeFirst()
    }
    guard words.count >= 2, ["class", "struct", "actor", "enum"].contains(words[0]) else {
      return nil
    }
    let superclass =
      words.count >= 3 ? words[2].trimmingCharacters(in: .punctuationCharacters) : nil
    return (words[1], superclass)
  }

  static let modifiers: Set<String> = [
    "public", "private", "fileprivate", "internal", "final", "open", "nonisolated",
  ]

  /// `@MainActor func test_x() async throws {` -> test_x.
  static func functionName(_ trimmed: String) -> String? {
    guard let range = trimmed.range(of: "func ") else { return nil }
    let before = trimmed[..<range.lowerBound]
    // Only attributes and modifiers before `func`: not a closure or a call.
    guard
      before.first == "@"
        || before.split(separator: " ").allSatisfy({ modifiers.contains(String($0)) })
    else { return nil }
    let rest = trimmed[range.upperBound...]
    let name = rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
    return name.isEmpty ? nil : String(name)
  }
}
