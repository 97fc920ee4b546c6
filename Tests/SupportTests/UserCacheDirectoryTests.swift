import FailClosedSupport
import Foundation
import Testing

/// The user's cache directory: FAILCLOSED_CACHE first, then XDG_CACHE_HOME/failclosed, then
/// ~/.cache/failclosed; an empty variable counts as unset.
@Suite struct UserCacheDirectoryTests {
  @Test func failclosedCacheWinsThenXDGThenHome() {
    #expect(
      UserCacheDirectory.root(environment: ["FAILCLOSED_CACHE": "/c", "XDG_CACHE_HOME": "/x"])
        == "/c")
    #expect(UserCacheDirectory.root(environment: ["XDG_CACHE_HOME": "/x"]) == "/x/failclosed")
    #expect(
      UserCacheDirectory.root(environment: ["FAILCLOSED_CACHE": "", "XDG_CACHE_HOME": ""])
        == NSHomeDirectory() + "/.cache/failclosed")
    #expect(UserCacheDirectory.root(environment: [:]) == NSHomeDirectory() + "/.cache/failclosed")
  }
}
