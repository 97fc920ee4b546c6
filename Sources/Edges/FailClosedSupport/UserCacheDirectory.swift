import Foundation

/// Where failclosed keeps what it can make again but would rather not (the bitchat-source
/// builds, the private network's authority keys): $FAILCLOSED_CACHE, else
/// $XDG_CACHE_HOME/failclosed, else ~/.cache/failclosed.
public enum UserCacheDirectory {
  public static func root(
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> String {
    if let explicit = environment["FAILCLOSED_CACHE"], !explicit.isEmpty { return explicit }
    let base =
      environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
      ?? NSHomeDirectory() + "/.cache"
    return base + "/failclosed"
  }
}
