import Foundation
import Testing

/// Package.swift's dependencies say what each module imports of the package's own modules, no
/// more and no less, so the dependency graph read from it is the real one.
@Suite struct PackageDependencyTests {
  struct Target {
    let name: String
    let declared: Set<String>
    /// Its folder: `path:` when given (Sources/<layer>/<name>), else SwiftPM's default.
    let directory: String
  }

  /// The targets of Package.swift with their declared dependencies.
  static func targets() throws -> [Target] {
    let text = try RepositoryFiles.text("Package.swift")
    let kinds = [".target(", ".testTarget(", ".executableTarget(", ".systemLibrary("]
    var starts: [String.Index] = []
    for kind in kinds {
      var from = text.startIndex
      while let range = text.range(of: kind, range: from..<text.endIndex) {
        starts.append(range.lowerBound)
        from = range.upperBound
      }
    }
    starts.sort()
    let name = /name: "(\w+)"/
    let dependencies = /dependencies: \[([^\]]*)\]/
    let quoted = /"(\w+)"/
    let path = /path: "([^"]+)"/
    return starts.enumerated().compactMap { index, start in
      let end = index + 1 < starts.count ? starts[index + 1] : text.endIndex
      let chunk = text[start..<end]
      guard let found = chunk.firstMatch(of: name) else { return nil }
      let list = chunk.firstMatch(of: dependencies).map { String($0.1) } ?? ""
      let name = String(found.1)
      let directory =
        chunk.firstMatch(of: path).map { String($0.1) }
        ?? (name.hasSuffix("Tests") ? "Tests/" : "Sources/") + name
      return Target(
        name: name, declared: Set(list.matches(of: quoted).map { String($0.1) }),
        directory: directory)
    }
  }

  /// The modules the Swift files of `directory` import.
  static func imports(under directory: String) -> Set<String> {
    let base = RepositoryFiles.path(directory)
    guard let files = FileManager.default.enumerator(atPath: base) else { return [] }
    let line = /(?m)^(?:@testable\s+)?import\s+(\w+)/
    var found: Set<String> = []
    for case let file as String in files where file.hasSuffix(".swift") {
      guard let text = try? String(contentsOfFile: base + "/" + file, encoding: .utf8) else {
        continue
      }
      found.formUnion(text.matches(of: line).map { String($0.1) })
    }
    return found
  }

  @Test func everyTargetDeclaresExactlyThePackageModulesItImports() throws {
    let targets = try Self.targets()
    let names = Set(targets.map(\.name))
    #expect(names.contains("FailClosedSupport") && names.contains("MockTorTests"), "the scan works")
    for target in targets {
      let used = Self.imports(under: target.directory).intersection(names)
      #expect(
        used == target.declared,
        """
        \(target.name): imported but not declared \(used.subtracting(target.declared).sorted()), \
        declared but not imported \(target.declared.subtracting(used).sorted())
        """)
    }
  }

  /// The edges the issue named: SystemUnderTest no longer reaches the private network's code.
  @Test func theModelDoesNotDependOnTheTestnet() throws {
    let model = try #require(try Self.targets().first { $0.name == "SystemUnderTest" })
    #expect(!model.declared.contains("Testnet"))
  }
}
