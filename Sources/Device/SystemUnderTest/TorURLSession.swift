/// bitchat's TorURLSession: a Tor session (SOCKS 127.0.0.1:39050) and a direct one; `session`
/// is the Tor one while proxying is on. setProxyMode(useTor:) is a no-op when unchanged, else
/// rebuild(), which in bitchat makes new sessions WITHOUT cancelling the old sessions' tasks
/// (weakness 4; the hardened profile cancels them).
@AppActor public final class TorURLSession: ProxyModeSwitching {
  public private(set) var useTorProxy = true
  public private(set) var torSession: NetworkSession
  public private(set) var directSession: NetworkSession
  public private(set) var rebuildCount = 0
  private let makeTorSession: @AppActor () -> NetworkSession
  private let makeDirectSession: @AppActor () -> NetworkSession
  private let profile: SUTProfile
  private let log: AppEventLog

  public init(
    profile: SUTProfile, log: AppEventLog,
    makeTorSession: @escaping @AppActor () -> NetworkSession,
    makeDirectSession: @escaping @AppActor () -> NetworkSession
  ) {
    self.profile = profile
    self.log = log
    self.makeTorSession = makeTorSession
    self.makeDirectSession = makeDirectSession
    torSession = makeTorSession()
    directSession = makeDirectSession()
    // The initial mode is state too: bitchat starts proxying, and a later setProxyMode(true)
    // is a no-op that logs nothing.
    log.state("session", "proxyMode", .string("tor"))
  }

  /// The session callers use now.
  public var session: NetworkSession { useTorProxy ? torSession : directSession }

  public func setProxyMode(useTor: Bool) {
    guard useTor != useTorProxy else { return }
    useTorProxy = useTor
    log.state("session", "proxyMode", .string(useTor ? "tor" : "direct"))
    rebuild()
  }

  public func rebuild() {
    let old = [torSession, directSession]
    torSession = makeTorSession()
    directSession = makeDirectSession()
    rebuildCount += 1
    log.state("session", "rebuilt", .int(rebuildCount))
    if profile.rebuildCancelsOldTasks {
      for session in old { session.invalidateAndCancel() }
    }
  }
}
