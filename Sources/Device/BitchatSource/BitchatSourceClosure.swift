import Foundation

/// Which of a checkout's files the lane compiles, found from bitchat's own code first: from the
/// Tor-layer files (and the driver's or the tests' needs), every symbol they use is looked up
/// in the checkout, and the file that declares it comes along with what it needs in turn,
/// whichever module it is in (the app, BitFoundation, BitLogger...). A stand-in
/// (BitchatShims/AppStandIns) is used only where the checkout's own file cannot build on Linux:
/// it imports a framework Linux lacks, it needs such a file, or it failed to compile here (the
/// builder's feedback). A stand-in whose type a used file of the checkout declares is left out.
public struct BitchatSourceClosure: Sendable {
  /// Code that is always compiled: the Tor layer's files, or one of the project's own (driver,
  /// tests) that mentions symbols of the app.
  public struct Seed: Sendable {
    public let name: String
    public let module: String
    public let outline: SwiftSourceOutline
    /// Set for a checkout file.
    public let relativePath: String?
  }

  /// A stand-in file and what it declares.
  public struct StandIn: Sendable {
    public let name: String
    public let outline: SwiftSourceOutline
  }

  /// A symbol some compiled file mentions that the checkout declares but that could not be used.
  public struct Unresolved: Sendable, Equatable {
    public let symbol: String
    public let neededBy: String
    /// (checkout file, why it cannot be used here).
    public let declaredIn: [Declaration]
  }

  public struct Declaration: Sendable, Equatable {
    public let path: String
    public let reason: String
  }

  /// Modules a file may import on Linux besides the checkout's own: the toolchain's and the
  /// project's shims (BitchatShims: Combine, Network, the FoundationNetworking re-export).
  public static let linuxModules: Set<String> = [
    "Foundation", "FoundationEssentials", "FoundationNetworking", "Dispatch", "Combine", "Network",
    "Glibc", "Swift", "_Concurrency", "XCTest", "Testing",
  ]

  public let index: BitchatCheckoutIndex
  /// Checkout files compiled, by module.
  public let files: [BitchatCheckoutIndex.SourceFile]
  /// Stand-ins compiled, by file name.
  public let standIns: [String]
  /// Why each compiled stand-in is used: the checkout's file it replaces and why that file
  /// cannot be used, or that the checkout declares none of its types.
  public let standInReasons: [String: String]
  /// Stand-ins left out because the checkout's own file is compiled: name -> that file.
  public let replacedStandIns: [String: String]
  /// Checkout files that cannot be used here, with the reason (only those something needed).
  public let unusable: [String: String]
  /// Symbols needed, declared in the checkout, provided by neither a usable file nor a stand-in.
  public let unresolved: [Unresolved]
  /// Local modules each module's files import anywhere in the checkout.
  public let moduleImportsOfCheckout: [String: Set<String>]

  public init(
    index: BitchatCheckoutIndex, seeds: [Seed], standIns: [StandIn],
    failedToCompile: [String: String] = [:]
  ) {
    self.index = index
    var unusable = failedToCompile
    let moduleImports = Self.moduleImports(index)
    moduleImportsOfCheckout = moduleImports
    while true {
      let pass = Pass(
        index: index, seeds: seeds, standIns: standIns, unusable: unusable,
        moduleImports: moduleImports)
      pass.run()
      // A file that needs a symbol nobody can provide cannot be used either; try again without
      // it until nothing changes.
      if pass.broken.isEmpty {
        files = pass.included.sorted().compactMap { index.files[$0] }
        self.standIns = pass.activeStandIns.sorted()
        replacedStandIns = pass.replacedStandIns
        self.unusable = pass.consulted
        unresolved = pass.unresolved.sorted { ($0.symbol, $0.neededBy) < ($1.symbol, $1.neededBy) }
        standInReasons = Self.reasons(
          for: standIns.filter { pass.activeStandIns.contains($0.name) }, index: index,
          unusable: pass.consulted)
        return
      }
      for (path, reason) in pass.broken { unusable[path] = reason }
    }
  }

  /// For each stand-in: the first checkout file declaring one of its types, with the reason that
  /// file is unusable.
  static func reasons(
    for standIns: [StandIn], index: BitchatCheckoutIndex, unusable: [String: String]
  ) -> [String: String] {
    var reasons: [String: String] = [:]
    for standIn in standIns {
      let declaring = standIn.outline.types.sorted().lazy.flatMap { index.declaringFiles(of: $0) }
        .first { unusable[$0.relativePath] != nil }
      reasons[standIn.name] =
        declaring.map { "for \($0.relativePath): \(unusable[$0.relativePath] ?? "")" }
        ?? "no file of the checkout declares its types where Linux compiles"
    }
    return reasons
  }

  /// Local modules each module's files import anywhere in the checkout: their extension members
  /// are visible in every file of the importing module (Swift 5 mode), as in the app's build.
  static func moduleImports(_ index: BitchatCheckoutIndex) -> [String: Set<String>] {
    var imports: [String: Set<String>] = [:]
    for file in index.files.values {
      imports[file.module, default: []].formUnion(
        file.outline.imports.union(file.outline.conditionalImports).intersection(
          index.localModules))
    }
    return imports
  }

  /// One resolution with a fixed set of unusable files.
  final class Pass {
    let index: BitchatCheckoutIndex
    let seeds: [Seed]
    let standIns: [StandIn]
    let forced: [String: String]
    let moduleImports: [String: Set<String>]
    let seedPaths: Set<String>
    var included: Set<String> = []
    var neededStandIns: Set<String> = []
    var consulted: [String: String] = [:]
    var unresolved: [Unresolved] = []
    var broken: [String: String] = [:]
    var queue: [(name: String, module: String, outline: SwiftSourceOutline, path: String?)] = []

    init(
      index: BitchatCheckoutIndex, seeds: [Seed], standIns: [StandIn], unusable: [String: String],
      moduleImports: [String: Set<String>]
    ) {
      self.index = index
      self.seeds = seeds
      self.standIns = standIns
      forced = unusable
      self.moduleImports = moduleImports
      seedPaths = Set(seeds.compactMap(\.relativePath))
    }

    /// Why a checkout file cannot be compiled here, or nil.
    func reason(_ path: String) -> String? {
      if let forced = forced[path] { return forced }
      guard let file = index.files[path] else { return "not in the checkout" }
      let missing = file.outline.imports.union(file.outline.conditionalImports)
        .subtracting(BitchatSourceClosure.linuxModules)
        .subtracting(index.localModules).sorted()
      if !missing.isEmpty {
        return "it imports \(missing.joined(separator: ", ")), which Linux does not have"
      }
      return nil
    }

    func visibleModules(_ module: String, imports: Set<String>) -> Set<String> {
      imports.union([module]).union(moduleImports[module] ?? [])
    }

    func run() {
      for seed in seeds {
        if let path = seed.relativePath { included.insert(path) }
        queue.append((seed.name, seed.module, seed.outline, seed.relativePath))
      }
      var cursor = 0
      while cursor < queue.count {
        let item = queue[cursor]
        cursor += 1
        let own = item.outline.declaredNames
        let visible = visibleModules(
          item.module, imports: item.outline.imports.union(item.outline.conditionalImports))
        for symbol in item.outline.typeReferences.subtracting(own).sorted() {
          resolveType(symbol, from: item, visible: visible)
        }
        for member in item.outline.memberReferences.subtracting(own).sorted() {
          resolveExtensionMember(member, visible: visible)
        }
      }
      findBroken()
    }

    private func resolveType(
      _ symbol: String,
      from item: (name: String, module: String, outline: SwiftSourceOutline, path: String?),
      visible: Set<String>
    ) {
      let declaring = index.declaringFiles(of: symbol).filter {
        visible.contains($0.module)
          && ($0.outline.types.contains(symbol) || $0.outline.values.contains(symbol))
      }
      guard !declaring.isEmpty else {
        // Not the checkout's (Foundation's, the shims'): a stand-in may still declare it.
        useStandIn(declaring: symbol)
        return
      }
      if declaring.contains(where: { included.contains($0.relativePath) }) { return }
      // The file in the same module first, as the compiler would.
      let ordered = declaring.sorted {
        ($0.module != item.module ? 1 : 0) < ($1.module != item.module ? 1 : 0)
      }
      if let usable = ordered.first(where: { reason($0.relativePath) == nil }) {
        include(usable)
        return
      }
      for file in declaring { consulted[file.relativePath] = reason(file.relativePath) }
      if !useStandIn(declaring: symbol) {
        unresolved.append(
          Unresolved(
            symbol: symbol, neededBy: item.path ?? item.name,
            declaredIn: declaring.map {
              Declaration(path: $0.relativePath, reason: reason($0.relativePath) ?? "")
            }))
      }
    }

    /// A member declared in an extension of a type the checkout does not declare (String,
    /// Notification.Name, Data): the file comes along if it can.
    private func resolveExtensionMember(_ member: String, visible: Set<String>) {
      let declaring = index.declaringFiles(of: member).filter { file in
        visible.contains(file.module)
          && file.outline.extensionMembers.contains { type, members in
            members.contains(member)
              && index.declaringFiles(of: type).allSatisfy {
                !$0.outline.types.contains(type)
              }
          }
      }
      guard !declaring.isEmpty,
        !declaring.contains(where: { included.contains($0.relativePath) })
      else { return }
      if let usable = declaring.first(where: { reason($0.relativePath) == nil }) {
        include(usable)
      } else {
        for file in declaring { consulted[file.relativePath] = reason(file.relativePath) }
      }
    }

    private func include(_ file: BitchatCheckoutIndex.SourceFile) {
      guard included.insert(file.relativePath).inserted else { return }
      queue.append((file.name, file.module, file.outline, file.relativePath))
    }

    @discardableResult
    private func useStandIn(declaring symbol: String) -> Bool {
      guard let standIn = standIns.first(where: { $0.outline.types.contains(symbol) }) else {
        return false
      }
      if neededStandIns.insert(standIn.name).inserted {
        queue.append((standIn.name, BitchatCheckoutIndex.appModule, standIn.outline, nil))
      }
      return true
    }

    /// Stand-ins whose every type no compiled checkout file declares.
    var activeStandIns: Set<String> {
      neededStandIns.filter { replacedStandIns[$0] == nil }
    }

    var replacedStandIns: [String: String] {
      var replaced: [String: String] = [:]
      for standIn in standIns where neededStandIns.contains(standIn.name) {
        for type in standIn.outline.types.sorted() {
          if let real = index.declaringFiles(of: type).first(where: {
            included.contains($0.relativePath) && $0.outline.types.contains(type)
          }) {
            replaced[standIn.name] = real.relativePath
            break
          }
        }
      }
      return replaced
    }

    /// Included files (not seeds) that mention a type the checkout declares, in a module they
    /// see, that neither a compiled file nor an active stand-in provides.
    private func findBroken() {
      let active = activeStandIns
      let standInTypes = standIns.filter { active.contains($0.name) }.reduce(into: Set<String>()) {
        $0.formUnion($1.outline.types)
      }
      for path in included.subtracting(seedPaths).sorted() {
        guard let file = index.files[path] else { continue }
        let visible = visibleModules(
          file.module, imports: file.outline.imports.union(file.outline.conditionalImports))
        for symbol in file.outline.typeReferences.subtracting(file.outline.declaredNames).sorted() {
          let declaring = index.declaringFiles(of: symbol).filter {
            visible.contains($0.module) && $0.outline.types.contains(symbol)
          }
          guard !declaring.isEmpty,
            !declaring.contains(where: { included.contains($0.relativePath) }),
            !standInTypes.contains(symbol)
          else { continue }
          let why = declaring.first.map { "\($0.relativePath): \(reason($0.relativePath) ?? "")" }
          broken[path] = "it needs \(symbol) (\(why ?? ""))"
          break
        }
      }
    }
  }

  /// The summary line: how much is bitchat's own code.
  public var summary: String {
    let byModule = Dictionary(grouping: files, by: \.module).map { "\($0.value.count) \($0.key)" }
      .sorted()
    let stand =
      standIns.isEmpty
      ? "no stand-ins"
      : "stand-ins: "
        + standIns.map { "\($0) (\(standInReasons[$0] ?? "used"))" }.joined(separator: ", ")
    return "\(files.count) files of the checkout (\(byModule.joined(separator: ", "))); \(stand)"
  }

  /// Why `symbol` is not available, naming the checkout's file that declares it, or nil.
  public func explanation(of symbol: String) -> String? {
    if let entry = unresolved.first(where: { $0.symbol == symbol }),
      let first = entry.declaredIn.first
    {
      return "\(symbol) is declared in \(first.path), which cannot be used here: \(first.reason)"
    }
    let declaring = index.declaringFiles(of: symbol)
    guard let first = declaring.first else { return nil }
    if let why = unusable[first.relativePath] {
      return "\(symbol) is declared in \(first.relativePath), which cannot be used here: \(why)"
    }
    if files.contains(where: { $0.relativePath == first.relativePath }) {
      return "\(symbol) is declared in \(first.relativePath), which is compiled"
    }
    return "\(symbol) is declared in \(first.relativePath), which nothing compiled here needed"
  }
}
