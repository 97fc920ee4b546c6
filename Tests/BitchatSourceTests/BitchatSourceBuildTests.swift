import FailClosedSupport
import Foundation
import TestSupport
import Testing

@testable import BitchatSource

/// The build cache the tests share (under the package's .build, so reruns reuse it; also
/// FAILCLOSED_CACHE=.build/bitchat-source-tests for leak-audit).
let testCacheRoot =
  BitchatSourceLocation.packageRoot + "/.build/bitchat-source-tests/bitchat-source"

/// One build at a time in this process: suites run side by side, and two builds of the same
/// generated package at once would fight over its .build.
let buildLock = NSLock()

/// Builds the lane's package for the pinned checkout (or reuses it); the result of the call.
func buildPinned() throws -> BitchatSourceBuilder.Result {
  try buildLock.withLock {
    try BitchatSourceLocation.prepare(
      bitchatSource: pinnedCheckout, cacheRoot: testCacheRoot, progress: { _ in })
  }
}

/// The generated package, built with the real toolchain: slow (a minute or two the first
/// time), so these run one at a time.
@Suite(
  .serialized,
  .needsBitchatCheckout)
struct BitchatSourceBuildTests {
  @Test func aSecondRunWithTheSameFilesDoesNotRebuild() throws {
    let first = try buildPinned()
    #expect(FileManager.default.isExecutableFile(atPath: first.executable))
    let before =
      try FileManager.default.attributesOfItem(atPath: first.executable)[.modificationDate]
      as? Date
    let second = try buildPinned()
    #expect(second.cached)
    #expect(second.executable == first.executable)
    let after =
      try FileManager.default.attributesOfItem(atPath: second.executable)[.modificationDate]
      as? Date
    #expect(before == after)
    #expect(second.seconds < 5)
  }

  @Test func theGeneratedPackageCompilesBitchatsFilesInPlace() throws {
    let result = try buildPinned()
    let directory = (result.executable as NSString).deletingLastPathComponent + "/../.."
    let link =
      (directory as NSString).standardizingPath
      + "/Sources/Tor/localPackages/Arti/Sources/TorManager.swift"
    let destination = try FileManager.default.destinationOfSymbolicLink(atPath: link)
    #expect(destination == pinnedCheckout + "/localPackages/Arti/Sources/TorManager.swift")
    let manifest = try String(
      contentsOfFile: (directory as NSString).standardizingPath + "/Package.swift", encoding: .utf8)
    #expect(manifest.contains(".swiftLanguageMode(.v5)"))
    #expect(manifest.contains(#".define("DEBUG")"#))
  }

  /// A tree made from the project's own fixture (Fixtures/unknown-symbol-tree): TorManager.swift
  /// uses NWBrowser, which the Network shim lacks.
  @Test func aSymbolNoShimProvidesIsNamedWithItsFileAndShim() throws {
    let tree = try temporaryDirectory("unknown-symbol")
    defer { try? FileManager.default.removeItem(atPath: tree) }
    var fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    fixture.appendPathComponent("Fixtures/unknown-symbol-tree")
    let enumerator = FileManager.default.enumerator(atPath: fixture.path)!
    while let path = enumerator.nextObject() as? String {
      guard path.hasSuffix(".swift.txt") else { continue }
      let target = tree + "/" + String(path.dropLast(4))
      try FileManager.default.createDirectory(
        atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
      try FileManager.default.copyItem(atPath: fixture.path + "/" + path, toPath: target)
    }
    let cache = tree + "/cache"
    do {
      _ = try BitchatSourceLocation.prepare(
        bitchatSource: tree, cacheRoot: cache, progress: { _ in })
      Issue.record("the build succeeded although TorManager.swift uses NWBrowser")
    } catch let error as BitchatSourceError {
      guard case .unknownSymbol(let file, let line, let symbol, let shim, _, _) = error else {
        Issue.record("expected an unknown symbol, got \(error)")
        return
      }
      #expect(file == tree + "/localPackages/Arti/Sources/TorManager.swift")
      #expect(line == 6)
      #expect(symbol == "NWBrowser")
      #expect(shim == "the Network shim (BitchatShims/Network)")
      #expect("\(error)".contains("TorManager.swift:6: 'NWBrowser' is provided by no shim"))
    }
  }
}

/// The shims against Apple's documented behaviour and arti.h against lib.rs's contract, run
/// where the shims are built (the generated package's bitchat-source-checks).
@Suite(
  .serialized,
  .needsBitchatCheckout)
struct BitchatShimContractTests {
  @Test func everyShimAndArtiCheckHolds() throws {
    let result = try buildPinned()
    let checks =
      (result.executable as NSString).deletingLastPathComponent + "/"
      + BitchatSourcePackage.checksName
    let process = Process()
    process.executableURL = URL(fileURLWithPath: checks)
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
    // Each API bitchat uses is covered: arti.h, Combine, Network, URLSession, WebSocket tasks.
    for prefix in [
      "arti:", "Combine:", "Network:", "URLSession:", "URLSession apple:",
      "URLSession linux-foundation:", "URLSessionWebSocketTask apple:",
    ] {
      #expect(names.contains { $0.hasPrefix(prefix) }, "no check for \(prefix)")
    }
  }
}
