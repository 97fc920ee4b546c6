/// Why the bitchat-source lane cannot build or run; each names the place at fault.
public enum BitchatSourceError: Error, CustomStringConvertible, Equatable, Sendable {
  case noCheckout(String)
  case missingFile(root: String, path: String)
  /// A symbol a bitchat file needs that no shim provides; `origin` says where the checkout
  /// declares it and why that file could not be used (or that nothing declares it).
  case unknownSymbol(
    file: String, line: Int, symbol: String, shim: String, diagnostic: String, origin: String)
  case buildFailed(String)
  case noShims(String)
  /// The checkout has none of the Tor layer's tests the command knows (bitchat before it had
  /// them): nothing to run, which is not a failure of the tests.
  case noTorLayerTests(root: String, looked: [String])
  /// The sweep's repository is missing, not git, or lacks a commit named.
  case noRepository(String, String)
  /// A sweep table (--expect FILE) that cannot be read.
  case malformedSweepTable(String, String)

  public var description: String {
    switch self {
    case .noCheckout(let root):
      return """
        no bitchat checkout at \(root): the bitchat-source lane needs one. Get it with
          git clone https://github.com/permissionlesstech/bitchat \(root)
        or pass --bitchat-src DIR (a checkout of permissionlesstech/bitchat); the lane is skipped
        without it.
        """
    case .missingFile(let root, let path):
      return
        "\(root)/\(path): missing; the bitchat-source lane needs this file of bitchat's Tor layer "
        + "(is \(root) a bitchat checkout?)"
    case .unknownSymbol(let file, let line, let symbol, let shim, let diagnostic, let origin):
      return
        "\(file):\(line): '\(symbol)' is provided by no shim: \(shim) lacks it; \(origin) "
        + "(compiler: \(diagnostic))"
    case .noTorLayerTests(let root, let looked):
      return
        "\(root): this checkout has no test of bitchat's Tor layer (looked for "
        + looked.joined(separator: ", ") + "): nothing to run"
    case .buildFailed(let text): return "the generated package did not build: \(text)"
    case .noShims(let path): return "the project's shims are not at \(path)"
    case .noRepository(let path, let why):
      return "\(path): \(why) (the sweep needs a clone of permissionlesstech/bitchat)"
    case .malformedSweepTable(let path, let why): return "\(path): \(why)"
    }
  }
}
