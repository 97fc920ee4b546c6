import Foundation
import Testing

@testable import BitchatSource

/// A small checkout written file by file: the app, a local package with a manifest.
private func checkout(_ files: [String: String]) throws -> String {
  let root = try temporaryDirectory("closure")
  for (path, text) in files {
    let full = root + "/" + path
    try FileManager.default.createDirectory(
      atPath: (full as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try text.write(toFile: full, atomically: true, encoding: .utf8)
  }
  return root
}

private let foundationManifest = """
  // swift-tools-version: 5.9
  import PackageDescription
  let package = Package(
    name: "BitFoundation",
    targets: [
      .target(name: "BitFoundation", dependencies: [], path: "Sources", exclude: ["Apple"]),
      .testTarget(name: "BitFoundationTests", dependencies: ["BitFoundation"]),
    ]
  )
  """

@Suite struct BitchatCheckoutIndexTests {
  /// Modules come from the checkout's own manifests: target names, paths and excludes.
  @Test func modulesAreReadFromTheLocalPackagesManifests() throws {
    let root = try checkout([
      "bitchat/App.swift": "struct App {}",
      "localPackages/BitFoundation/Package.swift": foundationManifest,
      "localPackages/BitFoundation/Sources/String+Ext.swift":
        "extension String { var x: Int { 1 } }",
      "localPackages/BitFoundation/Sources/Apple/Keychain.swift": "struct Keychain {}",
      "localPackages/BitFoundation/Tests/T.swift": "struct T {}",
    ])
    defer { try? FileManager.default.removeItem(atPath: root) }
    let index = BitchatCheckoutIndex(root: root)
    #expect(index.modules["BitchatApp"] == ["bitchat/App.swift"])
    #expect(
      index.modules["BitFoundation"] == ["localPackages/BitFoundation/Sources/String+Ext.swift"])
    #expect(index.localModules == ["BitFoundation"])
    #expect(
      index.declaringFiles(of: "x").map(\.relativePath) == [
        "localPackages/BitFoundation/Sources/String+Ext.swift"
      ])
  }
}

@Suite struct BitchatSourceClosureTests {
  static let files: [String: String] = [
    // The Tor layer's file: uses a helper of the app, a member of the local package, a
    // type only an Apple-only file declares (a stand-in has it), and one nobody can provide.
    "bitchat/Services/Seed.swift": """
    import Foundation
    struct Seed {
      let helper = Helper()
      let trimmed = "a".trimmedOrNilIfEmpty
      let manager = LocationManager.shared
      let phone = PhoneOnly()
      let channel = Channel()
    }
    """,
    "bitchat/Services/Helper.swift": "import Foundation\nstruct Helper { let peer = Peer() }",
    "bitchat/Services/Peer.swift": "import Foundation\nstruct Peer {}",
    "bitchat/Services/Unused.swift": "import Foundation\nstruct Unused {}",
    "bitchat/Services/LocationManager.swift": """
    import CoreLocation
    final class LocationManager { static let shared = LocationManager() }
    """,
    "bitchat/Services/PhoneOnly.swift": "import UIKit\nstruct PhoneOnly {}",
    // Usable by its imports, but it needs a UIKit type: it cannot be used either.
    "bitchat/Services/Channel.swift": "import Foundation\nstruct Channel { let view = Screen() }",
    "bitchat/Services/Screen.swift": "import UIKit\nstruct Screen {}",
    "bitchat/Services/Imports.swift": "import BitFoundation\n",
    "localPackages/BitFoundation/Package.swift": foundationManifest,
    "localPackages/BitFoundation/Sources/String+Ext.swift": """
    import Foundation
    extension StringProtocol { var trimmedOrNilIfEmpty: String? { nil } }
    """,
  ]

  static let standIns = [
    BitchatSourceClosure.StandIn(
      name: "LocationManager.swift",
      outline: SwiftSourceOutline(source: "final class LocationManager {}")),
    BitchatSourceClosure.StandIn(
      name: "Peer.swift", outline: SwiftSourceOutline(source: "struct Peer {}")),
  ]

  func resolve(_ root: String, failed: [String: String] = [:]) -> BitchatSourceClosure {
    let index = BitchatCheckoutIndex(root: root)
    let seed = index.files["bitchat/Services/Seed.swift"]!
    return BitchatSourceClosure(
      index: index,
      seeds: [
        .init(
          name: seed.name, module: seed.module, outline: seed.outline,
          relativePath: seed.relativePath)
      ], standIns: Self.standIns, failedToCompile: failed)
  }

  /// The checkout's own files first, with what they need; stand-ins only where the checkout's
  /// file cannot build here; nothing that no compiled file needs.
  @Test func bitchatsOwnCodeComesFirst() throws {
    let root = try checkout(Self.files)
    defer { try? FileManager.default.removeItem(atPath: root) }
    let closure = resolve(root)
    #expect(
      closure.files.map(\.relativePath) == [
        "bitchat/Services/Helper.swift", "bitchat/Services/Peer.swift",
        "bitchat/Services/Seed.swift", "localPackages/BitFoundation/Sources/String+Ext.swift",
      ])
    // The real Peer is compiled, so its stand-in is left out; LocationManager's is used.
    #expect(closure.standIns == ["LocationManager.swift"])
    #expect(
      closure.unusable["bitchat/Services/LocationManager.swift"]?.contains("CoreLocation") == true)
    #expect(
      closure.unusable["bitchat/Services/Channel.swift"]
        == "it needs Screen (bitchat/Services/Screen.swift: it imports UIKit, which Linux does not have)"
    )
    #expect(closure.unresolved.map(\.symbol) == ["Channel", "PhoneOnly"])
    #expect(
      closure.explanation(of: "PhoneOnly")
        == "PhoneOnly is declared in bitchat/Services/PhoneOnly.swift, which cannot be used here: "
        + "it imports UIKit, which Linux does not have")
    #expect(closure.summary.contains("4 files of the checkout (1 BitFoundation, 3 BitchatApp)"))
  }

  /// The builder's feedback: a file that failed to compile here is left out, with the
  /// compiler's reason, and the stand-in takes its place.
  @Test func aFileThatFailedToCompileGivesWayToItsStandIn() throws {
    let root = try checkout(Self.files)
    defer { try? FileManager.default.removeItem(atPath: root) }
    let closure = resolve(
      root, failed: ["bitchat/Services/Peer.swift": "it did not compile here (x)"])
    #expect(!closure.files.map(\.relativePath).contains("bitchat/Services/Peer.swift"))
    #expect(closure.standIns == ["LocationManager.swift", "Peer.swift"])
    #expect(closure.unusable["bitchat/Services/Peer.swift"] == "it did not compile here (x)")
  }

  /// Compile errors map back to the checkout files the closure brought along (never a seed).
  @Test func compileErrorsNameTheFilesBroughtAlong() {
    let output = """
      /cache/k/Sources/BitchatApp/bitchat/Protocols/LocationChannel.swift:29:72: error: extra argument 'comment' in call
      /cache/k/Sources/BitchatApp/bitchat/Services/Seed.swift:3:1: error: cannot find 'X' in scope
      """
    let failed = BitchatCompileFeedback.failedFiles(
      in: output,
      links: [
        "/cache/k/Sources/BitchatApp/bitchat/Protocols/LocationChannel.swift":
          "bitchat/Protocols/LocationChannel.swift",
        "/cache/k/Sources/BitchatApp/bitchat/Services/Seed.swift": "bitchat/Services/Seed.swift",
      ], candidates: ["bitchat/Protocols/LocationChannel.swift"])
    #expect(
      failed == [
        "bitchat/Protocols/LocationChannel.swift":
          "it did not compile here (extra argument 'comment' in call)"
      ])
  }

  /// The driver's flags follow what the checkout declares (a commit before the stall
  /// notification existed builds without the driver's use of it).
  @Test func driverFeaturesFollowTheCheckout() throws {
    let root = try checkout([
      "localPackages/Arti/Sources/TorManager.swift": """
      final class TorManager { @Published var bootstrapDidStall = false }
      """,
      "localPackages/Arti/Sources/TorNotifications.swift": """
      extension Notification.Name { static let TorWillStart = Notification.Name("a") }
      """,
    ])
    defer { try? FileManager.default.removeItem(atPath: root) }
    let index = BitchatCheckoutIndex(
      root: root,
      fallback: [
        ("localPackages/Arti/Sources/TorManager.swift", "Tor"),
        ("localPackages/Arti/Sources/TorNotifications.swift", "Tor"),
      ])
    let flags = BitchatDriverFeatures.flags(in: index)
    #expect(flags.contains("BITCHAT_HAS_BOOTSTRAP_STALL"))
    #expect(!flags.contains("BITCHAT_HAS_STALL_NOTIFICATION"))
    #expect(!flags.contains("BITCHAT_HAS_RELAY_SETTINGS"))
  }
}
