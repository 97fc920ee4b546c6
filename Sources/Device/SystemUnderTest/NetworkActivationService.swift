import FailClosedSupport
import Foundation

/// Switches the proxy mode of whatever carries the app's requests (TorURLSession).
@AppActor public protocol ProxyModeSwitching: AnyObject {
  func setProxyMode(useTor: Bool)
}

/// The relay side of activation: NostrRelayManager's connect() and disconnect().
@AppActor public protocol RelayConnectionControl: AnyObject {
  func connect()
  func disconnect()
  /// A mutual favourite, the location permission or the location channel changed.
  /// NostrRelayManager subscribes to the same three publishers as this service, earlier (its
  /// init runs inside start()), so it hears a change first.
  func activationInputsChanged()
}

extension RelayConnectionControl {
  public func activationInputsChanged() {}
}

/// bitchat's NetworkActivationService: whether the app may touch the network at all, and
/// whether through Tor. allowed = (location permission authorized || mutual favourites ||
/// in a location channel) && reachable (path not unsatisfied, debounced 2.5 s);
/// torDesired = allowed && the persisted Tor preference. A change tells TorManager, then
/// TorURLSession, then TorManager again (start or shut down), then the relays: bitchat's order.
@AppActor public final class NetworkActivationService {
  public nonisolated static let torPreferenceKey = "networkActivationService.userTorEnabled"
  /// How long a path status must hold before reachability follows it.
  public nonisolated static let reachabilityDebounce = 2.5

  public private(set) var activationAllowed = false {
    didSet {
      if activationAllowed != oldValue {
        log.state("activation", "activationAllowed", .bool(activationAllowed))
      }
    }
  }
  public private(set) var userTorEnabled = true {
    didSet {
      if userTorEnabled != oldValue {
        log.state("activation", "userTorEnabled", .bool(userTorEnabled))
      }
    }
  }
  public private(set) var torAutoStartDesired = false {
    didSet {
      if torAutoStartDesired != oldValue {
        log.state("activation", "torDesired", .bool(torAutoStartDesired))
      }
    }
  }

  // Activation inputs.
  public private(set) var locationPermissionAuthorized: Bool
  public private(set) var hasMutualFavorites: Bool
  public private(set) var inLocationChannel: Bool
  public private(set) var reachable = true
  /// A reachability change waiting out the debounce: the value and when it was first reported.
  private var pendingReachability: (value: Bool, since: Double)?
  private var pathDebounce: ScheduledTimer?
  private var started = false
  /// stopForPanic stops the reachability monitor until start() runs again.
  private var monitorStopped = false

  private let store: KeyValueStore
  private let tor: TorManager
  private weak var proxy: (any ProxyModeSwitching)?
  private weak var relays: (any RelayConnectionControl)?
  private let scheduler: any AppScheduler
  private let log: AppEventLog
  private let bus: NotificationBus

  public init(
    store: KeyValueStore, tor: TorManager, scheduler: any AppScheduler, bus: NotificationBus,
    log: AppEventLog, locationPermissionAuthorized: Bool = true, hasMutualFavorites: Bool = false,
    inLocationChannel: Bool = false
  ) {
    self.store = store
    self.tor = tor
    self.scheduler = scheduler
    self.bus = bus
    self.log = log
    self.locationPermissionAuthorized = locationPermissionAuthorized
    self.hasMutualFavorites = hasMutualFavorites
    self.inLocationChannel = inLocationChannel
  }

  /// Wires the session and the relays (created after this service in the app).
  public func attach(proxy: any ProxyModeSwitching, relays: (any RelayConnectionControl)?) {
    self.proxy = proxy
    self.relays = relays
  }

  /// The persisted preference, readable off the app actor: `object(forKey:) as? Bool ?? true`,
  /// so a missing or non-Bool value reads as on.
  public nonisolated static func persistedTorPreference(in store: KeyValueStore) -> Bool {
    guard let value = store.object(forKey: torPreferenceKey) else { return true }
    return PreferenceValue.asBool(value) ?? true
  }

  public func start() {
    guard !started else { return }
    started = true
    monitorStopped = false
    userTorEnabled = Self.persistedTorPreference(in: store)
    let allowed = basePolicyAllowed()
    activationAllowed = allowed
    torAutoStartDesired = allowed && userTorEnabled
    tor.setAutoStartAllowed(torAutoStartDesired)
    applyTorState(torDesired: torAutoStartDesired)
    if allowed {
      relays?.connect()
    } else {
      relays?.disconnect()
    }
  }

  public func setUserTorEnabled(_ enabled: Bool) {
    guard enabled != userTorEnabled else { return }
    userTorEnabled = enabled
    store.set(enabled, forKey: Self.torPreferenceKey)
    bus.post(.torUserPreferenceChanged(enabled: enabled))
    reevaluate()
  }

  public func setLocationPermission(authorized: Bool) {
    locationPermissionAuthorized = authorized
    relays?.activationInputsChanged()
    reevaluate()
  }

  public func setMutualFavorites(_ present: Bool) {
    hasMutualFavorites = present
    relays?.activationInputsChanged()
    reevaluate()
  }

  public func setInLocationChannel(_ inChannel: Bool) {
    inLocationChannel = inChannel
    relays?.activationInputsChanged()
    reevaluate()
  }

  /// The panic wipe's synchronous stop (NetworkActivationService.stopForPanic): no more
  /// reactions, activation off, relays disconnected, Tor's auto-start withdrawn, the session
  /// direct and Tor shut down. start() may run again afterwards.
  public func stopForPanic() {
    started = false
    monitorStopped = true
    pathDebounce?.cancel()
    pathDebounce = nil
    pendingReachability = nil
    activationAllowed = false
    torAutoStartDesired = false
    relays?.disconnect()
    tor.setAutoStartAllowed(false)
    applyTorState(torDesired: false)
  }

  /// A path update (reachable: any status but unsatisfied, so requires-connection counts).
  /// bitchat's NetworkReachabilityMonitor (ReachabilityDebounce, ingest, scheduleFlush): a
  /// report of the committed value cancels a pending change; a change commits once
  /// `reachabilityDebounce` seconds have passed since it was *first* reported, so repeated
  /// reports of the pending value keep its deadline instead of restarting it.
  public func pathUpdated(satisfied: Bool) {
    guard !monitorStopped else { return }
    pathDebounce?.cancel()
    pathDebounce = nil
    guard satisfied != reachable else {
      pendingReachability = nil
      return
    }
    if pendingReachability?.value != satisfied {
      pendingReachability = (satisfied, scheduler.now)
    }
    let since = pendingReachability?.since ?? scheduler.now
    let remaining = max(0, Self.reachabilityDebounce - (scheduler.now - since))
    if remaining == 0 {
      commitReachability(satisfied)
      return
    }
    pathDebounce = scheduler.schedule(after: remaining) {
      guard self.pendingReachability?.value == satisfied else { return }
      self.commitReachability(satisfied)
    }
  }

  private func commitReachability(_ value: Bool) {
    pendingReachability = nil
    guard reachable != value else { return }
    reachable = value
    log.state("activation", "reachable", .bool(value))
    reevaluate()
  }

  private func reevaluate() {
    guard started else { return }
    let allowed = basePolicyAllowed()
    let torDesired = allowed && userTorEnabled
    let statusChanged = allowed != activationAllowed
    let torChanged = torDesired != torAutoStartDesired
    if statusChanged { activationAllowed = allowed }
    if statusChanged || torChanged {
      torAutoStartDesired = torDesired
      tor.setAutoStartAllowed(torDesired)
      applyTorState(torDesired: torDesired)
    }
    if allowed {
      // Reset relay sockets when the transport path switches (Tor <-> direct).
      if torChanged { relays?.disconnect() }
      relays?.connect()
    } else if statusChanged {
      relays?.disconnect()
    }
  }

  private func basePolicyAllowed() -> Bool {
    let policy = locationPermissionAuthorized || hasMutualFavorites || inLocationChannel
    return policy && reachable
  }

  private func applyTorState(torDesired: Bool) {
    proxy?.setProxyMode(useTor: torDesired)
    if torDesired {
      tor.startIfNeeded()
    } else {
      tor.shutdownCompletely()
    }
  }
}

/// How a stored preference value reads as a Bool, as bitchat reads it on Apple's platforms:
/// `defaults.object(forKey:) as? Bool ?? true` (NetworkActivationService.swift, line 124).
/// UserDefaults hands numbers back as NSNumber, and Swift's NSNumber-to-Bool bridging succeeds
/// exactly for 0 and 1: a stored 0 reads as off, 1 as on; any other number, a string or
/// anything else is no Bool (and bitchat then keeps Tor on).
enum PreferenceValue {
  static func asBool(_ value: Any) -> Bool? {
    if let bool = value as? Bool, type(of: value) == Bool.self { return bool }
    if let number = value as? NSNumber {
      if String(cString: number.objCType) == "c" { return number.boolValue }
      let double = number.doubleValue
      if double == 0 || double == 1 { return double == 1 }
    }
    return nil
  }
}
