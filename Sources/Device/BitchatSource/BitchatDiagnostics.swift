import Foundation

/// Reads the compiler's diagnostics for the generated package: an error in one of bitchat's
/// files about a name the build does not know becomes ``BitchatSourceError/unknownSymbol``,
/// naming the bitchat file (its path in the checkout), the symbol and the shim that would have
/// to provide it.
public enum BitchatDiagnostics {
  /// Names the shims provide, by module, to decide which one lacks a symbol.
  static let combineNames: Set<String> = [
    "ObservableObject", "Published", "AnyPublisher", "Publisher", "Empty", "Just",
    "CurrentValueSubject", "PassthroughSubject", "AnyCancellable", "Cancellable", "sink",
    "receive", "removeDuplicates", "dropFirst", "eraseToAnyPublisher", "store", "debounce",
    "throttle", "combineLatest", "merge", "assign", "Subscribers", "Future", "Deferred",
  ]

  /// The error a failed build is reported as: the first unknown symbol in a bitchat file, with
  /// where the checkout declares it and why that could not be used, or the first errors.
  static func error(for output: String, links: [String: String], closure: BitchatSourceClosure)
    -> BitchatSourceError
  {
    let diagnostics = parse(output, links: links, root: closure.index.root, closure: closure)
    if let first = diagnostics.first { return first }
    return .buildFailed(CompilerErrorLines.summary(output))
  }

  public static func parse(
    _ output: String, links: [String: String], root: String, closure: BitchatSourceClosure? = nil
  )
    -> [BitchatSourceError]
  {
    CompilerErrorLines.unknownSymbols(in: output, links: links).map { entry in
      .unknownSymbol(
        file: root + "/" + entry.relative, line: entry.line, symbol: entry.symbol,
        shim: shimModule(for: entry.symbol, owner: entry.owner), diagnostic: entry.message,
        origin: closure?.explanation(of: entry.symbol) ?? "no file of the checkout declares it")
    }
  }

  /// The unknown name in a diagnostic, and the type or module it was looked up in, if any.
  static func symbol(in message: String) -> (String, String?)? {
    let quoted = message.split(separator: "'", omittingEmptySubsequences: false).enumerated()
      .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    if message.hasPrefix("cannot find type") || message.hasPrefix("cannot find '") {
      return quoted.first.map { ($0, nil) }
    }
    if message.hasPrefix("no such module") { return quoted.first.map { ($0, "module") } }
    if message.contains("has no member") {
      // "value of type 'T' has no member 'm'", "type 'T' has no member 'm'",
      // "module 'M' has no member named 'm'"
      guard quoted.count >= 2 else { return nil }
      return (quoted[1], quoted[0])
    }
    if message.hasPrefix("unknown attribute") { return quoted.first.map { ($0, nil) } }
    return nil
  }

  /// Which shim module would provide `symbol` (looked up in `owner`).
  static func shimModule(for symbol: String, owner: String?) -> String {
    if owner == "module" { return "no shim module named \(symbol) (BitchatShims/\(symbol))" }
    let name = owner ?? symbol
    // "AnyPublisher<Int, Never>" -> "AnyPublisher"; "NWEndpoint.Host" -> "NWEndpoint".
    let unqualified = name.split(separator: "<").first.map(String.init) ?? name
    let base = unqualified.split(separator: ".").first.map(String.init) ?? unqualified
    if base.hasPrefix("NW") || ["IPv4Address", "IPv6Address", "Network"].contains(base) {
      return "the Network shim (BitchatShims/Network)"
    }
    if combineNames.contains(base) || base.hasSuffix("Subject") || base.hasSuffix("Publisher")
      || base == "Combine"
    {
      return "the Combine shim (BitchatShims/Combine)"
    }
    if base.hasPrefix("URL") || base.hasPrefix("HTTP") || base == "FoundationNetworking" {
      return "the FoundationNetworking shim (BitchatShims/FoundationNetworkingShim)"
    }
    if base.hasPrefix("arti_") { return "arti.h (BitchatShims/ArtiLinux)" }
    return "the app stand-ins (BitchatShims/AppStandIns)"
  }
}
