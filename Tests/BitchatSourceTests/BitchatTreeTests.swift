import FailClosedSupport
import Foundation
import TestSupport
import Testing

@testable import BitchatSource

/// The pinned bitchat checkout the lane uses by default (test input, never edited);
/// FAILCLOSED_BITCHAT_SRC points the tests at another checkout (CI passes its own).
let pinnedCheckout =
  ProcessInfo.processInfo.environment["FAILCLOSED_BITCHAT_SRC"].flatMap { $0.isEmpty ? nil : $0 }
  ?? BitchatSourceLocation.defaultCheckout

/// The pinned checkout is here.
var hasBitchatCheckout: Bool { FileManager.default.fileExists(atPath: pinnedCheckout) }

extension Trait where Self == ConditionTrait {
  /// The pinned checkout: skipped locally without it, run (and failing) in CI.
  static var needsBitchatCheckout: Self {
    .needs("needs the bitchat checkout", if: hasBitchatCheckout)
  }
}

/// A temporary directory, removed by `cleanup`.
func temporaryDirectory(_ label: String) throws -> String {
  let path = NSTemporaryDirectory() + "fc-\(label)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
  try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  return path
}

/// Copies the pinned checkout's files, unmodified, into a temporary tree (to delete one).
func copyOfCheckout() throws -> String {
  let copy = try temporaryDirectory("bitchat-copy")
  let tree = try BitchatTree(root: pinnedCheckout)
  for file in tree.files {
    let target = copy + "/" + file.relativePath
    try FileManager.default.createDirectory(
      atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: tree.absolutePath(file), toPath: target)
  }
  return copy
}

@Suite(
  .needsBitchatCheckout)
struct BitchatTreeTests {
  @Test func findsTheTorLayerByPathInThePinnedCheckout() throws {
    let tree = try BitchatTree(root: pinnedCheckout)
    let paths = Set(tree.files.map(\.relativePath))
    #expect(paths.contains("localPackages/Arti/Sources/TorManager.swift"))
    #expect(paths.contains("bitchat/Nostr/NostrRelayManager.swift"))
    #expect(paths.contains("bitchat/Nostr/NostrRelaySettings.swift"))
    #expect(paths.contains("localPackages/BitLogger/Sources/SecureLogger.swift"))
    #expect(tree.absentOptional.isEmpty)
    #expect(tree.files.first { $0.name == "TorManager.swift" }?.target == "Tor")
  }

  @Test func aMissingRequiredFileIsNamed() throws {
    let copy = try copyOfCheckout()
    defer { try? FileManager.default.removeItem(atPath: copy) }
    try FileManager.default.removeItem(
      atPath: copy + "/localPackages/Arti/Sources/TorManager.swift")
    #expect(
      throws: BitchatSourceError.missingFile(
        root: copy, path: "localPackages/Arti/Sources/TorManager.swift")
    ) {
      try BitchatTree(root: copy)
    }
    let message =
      "\(BitchatSourceError.missingFile(root: copy, path: "localPackages/Arti/Sources/TorManager.swift"))"
    #expect(message.contains(copy + "/localPackages/Arti/Sources/TorManager.swift: missing"))
  }

  @Test func anOptionalFileMayBeAbsent() throws {
    let copy = try copyOfCheckout()
    defer { try? FileManager.default.removeItem(atPath: copy) }
    try FileManager.default.removeItem(atPath: copy + "/bitchat/Nostr/NostrRelaySettings.swift")
    let tree = try BitchatTree(root: copy)
    #expect(tree.absentOptional == ["bitchat/Nostr/NostrRelaySettings.swift"])
    #expect(!tree.has("bitchat/Nostr/NostrRelaySettings.swift"))
    let package = try BitchatSourcePackage(
      tree: tree, packageRoot: BitchatSourceLocation.packageRoot, cacheRoot: copy + "/cache")
    #expect(!package.manifest().contains("BITCHAT_HAS_RELAY_SETTINGS"))
  }

  @Test func theKeyFollowsTheFilesContentsNotTheirLocation() throws {
    let copy = try copyOfCheckout()
    defer { try? FileManager.default.removeItem(atPath: copy) }
    let shims = BitchatSourceLocation.packageRoot + "/BitchatShims"
    let sources = BitchatSourceLocation.packageRoot + "/Sources"
    let original = BitchatSourcePackage.key(
      tree: try BitchatTree(root: pinnedCheckout), shims: shims, projectSources: sources)
    #expect(
      BitchatSourcePackage.key(
        tree: try BitchatTree(root: copy), shims: shims, projectSources: sources) == original)
    // Another commit's file (here: one line added to a copy) is another key.
    let path = copy + "/bitchat/Services/TransportConfig.swift"
    try FileManager.default.removeItem(atPath: path)
    try "// another commit\n".write(toFile: path, atomically: true, encoding: .utf8)
    #expect(
      BitchatSourcePackage.key(
        tree: try BitchatTree(root: copy), shims: shims, projectSources: sources) != original)
  }

  /// The project modules linked into the driver (the transport's SOCKS, TLS...) are part of the
  /// key: a change there rebuilds it. The control: an unrelated module's change does not.
  @Test func theKeyFollowsTheLinkedProjectModules() throws {
    let tree = try BitchatTree(root: pinnedCheckout)
    let shims = BitchatSourceLocation.packageRoot + "/BitchatShims"
    let sources = NSTemporaryDirectory() + "fc-key-sources-\(getpid())"
    defer { try? FileManager.default.removeItem(atPath: sources) }
    for module in ["SOCKS", "Audit"] {
      try FileManager.default.createDirectory(
        atPath: sources + "/" + module, withIntermediateDirectories: true)
      try "struct A {}\n".write(
        toFile: sources + "/\(module)/A.swift", atomically: true, encoding: .utf8)
    }
    let before = BitchatSourcePackage.key(tree: tree, shims: shims, projectSources: sources)
    try "struct B {}\n".write(toFile: sources + "/Audit/A.swift", atomically: true, encoding: .utf8)
    #expect(BitchatSourcePackage.key(tree: tree, shims: shims, projectSources: sources) == before)
    try "struct B {}\n".write(toFile: sources + "/SOCKS/A.swift", atomically: true, encoding: .utf8)
    #expect(BitchatSourcePackage.key(tree: tree, shims: shims, projectSources: sources) != before)
  }
}

struct BitchatTreeErrorTests {
  @Test func noCheckoutSaysHowToGetOne() throws {
    let missing = NSTemporaryDirectory() + "fc-no-bitchat-\(getpid())"
    #expect(throws: BitchatSourceError.noCheckout(missing)) { try BitchatTree(root: missing) }
    let message = "\(BitchatSourceError.noCheckout(missing))"
    #expect(message.contains("git clone https://github.com/permissionlesstech/bitchat"))
    #expect(message.contains("--bitchat-src"))
  }
}
