/// Why the onion-browser-source lane cannot run, each with what to do.
public enum OnionBrowserSourceError: Error, CustomStringConvertible, Equatable, Sendable {
  case noCheckout(String)
  case noTorLayer(String)
  case missingFile(String)
  case noShims(String)
  case export(String)
  /// A name the build does not know: the checkout's file and line, the symbol, the shim that
  /// would provide it, the compiler's words.
  case unknownSymbol(file: String, line: Int, symbol: String, shim: String, diagnostic: String)
  case buildFailed(String)

  public var description: String {
    switch self {
    case .noCheckout(let path):
      return
        "no Onion Browser checkout at \(path) (git clone https://github.com/OnionBrowser/"
        + "OnionBrowser DIR, then --onion-browser-src DIR; or --onion-browser-src REPO@COMMIT "
        + "to export a commit of a clone)"
    case .noTorLayer(let root):
      return
        "\(root): neither OnionBrowser/TorManager.swift nor OnionBrowser/OnionManager.swift "
        + "runs tor with Tor.framework's TorThread (Onion Browser 1.X is Objective-C; 3.X "
        + "before a9e185cd has no built-in tor, only Orbot)"
    case .missingFile(let path): return "\(path): missing (the lane compiles it)"
    case .noShims(let path): return "\(path): the shims are missing (OnionBrowserShims/)"
    case .export(let reason): return "cannot export the commit: \(reason)"
    case .unknownSymbol(let file, let line, let symbol, let shim, let diagnostic):
      return "\(file):\(line): '\(symbol)' is provided by no shim: \(shim) lacks it (\(diagnostic))"
    case .buildFailed(let text): return "the build failed:\n\(text)"
    }
  }
}
