import Testing

@testable import BitchatSource

@Suite struct SwiftSourceOutlineTests {
  /// Declarations, imports (plain, conditional, `import struct M.T`) and references, with
  /// comments and literals left out and interpolations read as code.
  @Test func readsWhatAFileDeclaresImportsAndMentions() {
    let outline = SwiftSourceOutline(
      source: #"""
        import BitLogger
        @preconcurrency import Foundation
        import struct Foundation.Data
        import typealias Darwin.OSStatus
        #if canImport(UIKit)
        import UIKit
        #endif
        #if canImport(Network)
        import Network
        #endif
        // struct Commented {}
        /* class Hidden { /* nested */ } */
        @MainActor final class Relay: ObservableObject {
          var inner: Nested
          struct Nested {}
          func connect() { let s = "struct InString \(Helper.make(.fast))"; print(s) }
        }
        extension Substring { var trimmedOrNilIfEmpty: String? { nil } }
        extension Notification.Name { static let TorDidBecomeReady = Notification.Name("x") }
        func topLevel() {}
        let answer = #"raw "quoted" enum Nope"#
        """#)
    #expect(outline.imports == ["BitLogger", "Foundation", "Darwin"])
    // UIKit's import is in code Linux does not compile; Network's is compiled, under an #if.
    #expect(outline.conditionalImports == ["Network"])
    #expect(outline.types == ["Relay"])
    #expect(outline.values == ["topLevel", "answer"])
    #expect(outline.extensionMembers["Substring"] == ["trimmedOrNilIfEmpty"])
    #expect(outline.extensionMembers["Name"] == ["TorDidBecomeReady"])
    #expect(outline.typeReferences.isSuperset(of: ["ObservableObject", "Nested", "Helper"]))
    #expect(!outline.typeReferences.contains("Commented"))
    #expect(!outline.typeReferences.contains("InString"))
    #expect(!outline.typeReferences.contains("Nope"))
    #expect(outline.memberReferences.isSuperset(of: ["make", "fast"]))
  }
}

@Suite struct LinuxConditionTests {
  /// What Linux does not compile is not read: a whole file under `#if os(iOS) || os(macOS)`
  /// declares nothing here (bitchat's LocationStateManager), an `#else` branch is.
  @Test func codeLinuxDoesNotCompileDeclaresNothing() {
    let outline = SwiftSourceOutline(
      source: """
        import Foundation
        #if os(iOS) || os(macOS)
        import CoreLocation
        final class LocationStateManager: NSObject {}
        typealias LocationChannelManager = LocationStateManager
        #endif
        #if canImport(UIKit)
        import UIKit
        struct Phone {}
        #elseif canImport(Combine)
        struct Shim {}
        #else
        struct Never {}
        #endif
        #if DEBUG && !targetEnvironment(simulator)
        let debugOnly = 1
        #endif
        """)
    #expect(outline.imports == ["Foundation"])
    #expect(outline.types == ["Shim"])
    #expect(outline.values == ["debugOnly"])
    #expect(!outline.typeReferences.contains("NSObject"))
  }

  @Test func conditionsEvaluateAsOnLinux() {
    #expect(LinuxCondition.evaluate("os(Linux)"))
    #expect(!LinuxCondition.evaluate("os(iOS) || os(macOS)"))
    #expect(LinuxCondition.evaluate("!os(iOS) && canImport(Foundation)"))
    #expect(!LinuxCondition.evaluate("canImport(os.log)"))
    #expect(LinuxCondition.evaluate("canImport(Network)"))
    #expect(LinuxCondition.evaluate("DEBUG"))
    #expect(!LinuxCondition.evaluate("RELEASE"))
    #expect(LinuxCondition.evaluate("(os(macOS) || DEBUG) && swift(>=5.9)"))
  }

  /// A type's own members are kept apart from the names other files can see.
  @Test func membersOfATypeAreItsOwn() {
    let outline = SwiftSourceOutline(
      source: """
        final class TorManager {
          @Published var bootstrapDidStall = false
          static let shared = TorManager()
          func start() { let local = 1; _ = local }
        }
        """)
    #expect(outline.typeMembers["TorManager"] == ["bootstrapDidStall", "shared", "start"])
    #expect(outline.declaredNames == ["TorManager"])
  }
}
