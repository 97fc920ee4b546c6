import Combine
import Foundation
import FoundationNetworkingShim
import Network

@testable import Tor

/// Runs bitchat's real TorManager, NetworkActivationService, TorURLSession, GeoRelayDirectory
/// and NostrRelayManager through an actions file, wired as bitchat's AppRuntime wires them
/// (launch: GeoRelayDirectory.shared, whose init starts the first fetch, then
/// NetworkActivationService.start(); background and foreground as handleScenePhaseChange),
/// and prints what they do as `failclosed app`'s
/// JSON events. Time is real: bitchat reads the wall clock.
@MainActor
final class BitchatSourceDriver {
  private var cancellables = Set<AnyCancellable>()
  private var observers: [NSObjectProtocol] = []
  private let events = EventStream.shared
  private let proxyMode = ProxyModeTracker()
  private var relayAttempts: [String: Int] = [:]
  private var relayState: [String: Bool] = [:]
  private var didHandleInitialActive = true
  private var didEnterBackground = false
  private var messageCounter = 0

  func observe() {
    let tor = TorManager.shared
    func state(_ component: String, _ field: String, _ value: Any) {
      events.record("state", ["component": component, "field": field, "value": value])
    }
    tor.$isReady.removeDuplicates().sink { state("tor", "isReady", $0) }.store(in: &cancellables)
    tor.$isStarting.removeDuplicates().sink { state("tor", "isStarting", $0) }.store(
      in: &cancellables)
    tor.$bootstrapProgress.removeDuplicates().sink { state("tor", "bootstrapProgress", $0) }
      .store(in: &cancellables)
    tor.$bootstrapSummary.removeDuplicates().sink { state("tor", "bootstrapSummary", $0) }
      .store(in: &cancellables)
    // Each `#if BITCHAT_HAS_*`: a declaration older commits lack (BitchatDriverFeatures).
    #if BITCHAT_HAS_BOOTSTRAP_STALL
      tor.$bootstrapDidStall.removeDuplicates().sink { state("tor", "bootstrapDidStall", $0) }
        .store(in: &cancellables)
    #endif
    tor.$lastError.dropFirst().sink { error in
      guard let error = error as NSError? else { return }
      state("tor", "lastError", "\(error.code) \(error.localizedDescription)")
    }.store(in: &cancellables)
    var names: [Notification.Name] = [
      .TorWillStart, .TorDidBecomeReady, .TorWillRestart, .TorUserPreferenceChanged,
    ]
    #if BITCHAT_HAS_STALL_NOTIFICATION
      names.append(.TorBootstrapDidStall)
    #endif
    for name in names {
      observers.append(
        NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) {
          [events] note in
          var fields: [String: Any] = ["name": note.name.rawValue]
          if let enabled = note.userInfo?["enabled"] as? Bool { fields["enabled"] = enabled }
          events.record("notification", fields)
        })
    }
    #if BITCHAT_HAS_RELAY_DIRECTORY_REFRESH
      observers.append(
        NotificationCenter.default.addObserver(
          forName: .geoRelayDirectoryDidRefresh, object: nil, queue: nil
        ) { [events] _ in
          events.record("directory", ["phase": "refreshed", "source": "remote"])
        })
    #endif
    BitchatNetworkEvents.record = { [events, proxyMode] type, fields in
      // A route change shows before the first traffic on the new route.
      proxyMode.check(events)
      switch type {
      case "relay-connect":
        events.record(
          "relay",
          ["relay": fields["url"] ?? "", "phase": "connecting", "via": fields["via"] ?? ""])
      case "relay-send":
        // A NIP-01 EVENT frame written to a relay: the message was sent.
        if let id = Self.eventID(inFrame: fields["text"] ?? "") {
          events.record("message", ["id": id, "phase": "sent", "relay": fields["url"] ?? ""])
        }
      default:
        events.record(type, fields)
      }
    }
    // The session's route from the start (TorURLSession starts in Tor mode), then each change.
    poll()
    // Polled, as bitchat publishes neither: TorURLSession's proxy mode, and allowAutoStart.
    Timer.scheduledTimer(withTimeInterval: 0.05, repeats: true) { _ in
      MainActor.assumeIsolated { self.poll() }
    }
  }

  func observeActivation() {
    let activation = NetworkActivationService.shared
    func state(_ field: String, _ value: Bool) {
      events.record("state", ["component": "activation", "field": field, "value": value])
    }
    activation.$activationAllowed.removeDuplicates().sink { [proxyMode, events] in
      state("activationAllowed", $0)
      proxyMode.check(events)
    }.store(in: &cancellables)
    activation.$userTorEnabled.removeDuplicates().sink { [proxyMode, events] in
      state("userTorEnabled", $0)
      proxyMode.check(events)
    }.store(in: &cancellables)
    #if BITCHAT_HAS_NETWORK_REACHABLE
      activation.$isNetworkReachable.removeDuplicates().sink { state("reachable", $0) }
        .store(in: &cancellables)
    #endif
    NostrRelayManager.shared.$relays.sink { [weak self] relays in
      self?.relaysChanged(relays)
    }.store(in: &cancellables)
  }

  private var lastAutoStart: Bool?

  private func poll() {
    proxyMode.check(events)
    let autoStart = TorManager.shared.isAutoStartAllowed()
    if autoStart != lastAutoStart {
      lastAutoStart = autoStart
      events.record("state", ["component": "tor", "field": "allowAutoStart", "value": autoStart])
    }
  }

  private func relaysChanged(_ relays: [NostrRelayManager.Relay]) {
    var seen = Set<String>()
    for relay in relays {
      seen.insert(relay.url)
      let previous = relayState[relay.url]
      if previous != relay.isConnected, previous != nil || relay.isConnected {
        var fields: [String: Any] = [
          "relay": relay.url, "phase": relay.isConnected ? "connected" : "disconnected",
        ]
        if let error = relay.lastError { fields["error"] = "\(error)" }
        events.record("relay", fields)
      }
      relayState[relay.url] = relay.isConnected
      // A failed attempt schedules the next one (NostrRelayManager's backoff).
      let attempts = relay.reconnectAttempts
      if attempts > relayAttempts[relay.url, default: 0], !relay.isConnected {
        var fields: [String: Any] = ["relay": relay.url, "phase": "backoff", "attempt": attempts]
        if let next = relay.nextReconnectTime {
          fields["delay"] = max(0, next.timeIntervalSinceNow)
        }
        if let error = relay.lastError { fields["error"] = "\(error)" }
        events.record("relay", fields)
      }
      relayAttempts[relay.url] = attempts
    }
    for url in relayState.keys where !seen.contains(url) { relayState[url] = nil }
  }

  /// What GeoRelayDirectory loaded at launch (its init reads the cache, then the bundle, then
  /// ./relays/online_relays_gps.csv): the count from the directory, the source from where the
  /// file was (bitchat logs it; only the cache exists in the harness's state).
  private func reportDirectoryLoaded() {
    let count = GeoRelayDirectory.shared.entries.count
    let cache = ProcessInfo.processInfo.environment["XDG_DATA_HOME"].map {
      $0 + "/bitchat/georelays_cache_v2.csv"
    }
    let fromCache = cache.map { FileManager.default.fileExists(atPath: $0) } ?? false
    let source = count == 0 ? "none" : (fromCache ? "cache" : "bundle")
    events.record("directory", ["phase": "loaded", "source": source, "count": count])
  }

  // MARK: - Actions, as bitchat's AppRuntime does them

  func perform(_ action: DriverAction) {
    var fields: [String: Any] = ["action": action.name]
    if let argument = action.argument { fields["argument"] = argument }
    events.record("action", fields)
    defer { proxyMode.check(events) }
    switch action.name {
    case "start":
      // AppRuntime's init touches GeoRelayDirectory.shared (ChatViewModel's
      // networkActivationAllowed is true unless a panic wipe is pending), whose init loads the
      // list and starts the first fetch with the session of that moment; only then does
      // AppRuntime.start() call NetworkActivationService.shared.start() (issue 14, item 3).
      _ = GeoRelayDirectory.shared
      reportDirectoryLoaded()
      GeoRelayDirectory.shared.prefetchIfNeeded()
      NetworkActivationService.shared.start()
      observeActivation()
    case "background":
      TorManager.shared.setAppForeground(false)
      TorManager.shared.goDormantOnBackground()
      NostrRelayManager.shared.disconnect()
      didEnterBackground = true
    case "foreground":
      guard NetworkActivationService.shared.activationAllowed else { return }
      TorManager.shared.setAppForeground(true)
      let refresh = didHandleInitialActive && didEnterBackground
      if refresh, TorManager.shared.isAutoStartAllowed(), !TorManager.shared.isReady {
        TorManager.shared.ensureRunningOnForeground()
      }
      didEnterBackground = false
      if refresh && TorManager.shared.isAutoStartAllowed() {
        Task.detached {
          _ = await TorManager.shared.awaitReady(timeout: 60)
          await MainActor.run {
            TorURLSession.shared.rebuild()
            NostrRelayManager.shared.resetAllConnections()
          }
        }
      }
    case "set-preference":
      NetworkActivationService.shared.setUserTorEnabled((action.fields["value"] as? String) == "on")
    case "revoke-activation":
      LocationChannelManager.shared.permissionState = .denied
    case "grant-activation":
      LocationChannelManager.shared.permissionState = .authorized
    case "path-change":
      let satisfied = (action.fields["status"] as? String ?? "satisfied") == "satisfied"
      NWPathMonitor.simulatePathChange(satisfied ? .satisfied : .unsatisfied)
    case "add-relay":
      let url = action.fields["url"] as? String ?? ""
      #if BITCHAT_HAS_RELAY_SETTINGS
        switch NostrRelaySettings.add(url, builtIn: NostrRelayManager.builtInRelayURLs) {
        case .success(let normalized):
          events.record("relay", ["relay": normalized, "phase": "added"])
        case .failure(let failure):
          events.record("relay", ["relay": url, "phase": "rejected", "error": "\(failure)"])
        }
      #else
        events.record(
          "relay",
          ["relay": url, "phase": "rejected", "error": "no NostrRelaySettings in this bitchat"])
      #endif
    case "send-message":
      messageCounter += 1
      let event = Self.event(text: action.fields["text"] as? String ?? "", counter: messageCounter)
      // Queued while no relay is connected (NostrRelayManager keeps it until one is); the
      // frame itself shows as phase "sent" when the shim writes it to a relay.
      if !NostrRelayManager.shared.isConnected {
        events.record("message", ["id": event.id, "phase": "queued"])
      }
      NostrRelayManager.shared.sendEvent(event)
    case "refresh-directory":
      GeoRelayDirectory.shared.prefetchIfNeeded(force: true)
    default:
      break
    }
  }

  /// The id of `["EVENT", {...}]`, nil for other frames.
  nonisolated static func eventID(inFrame text: String) -> String? {
    guard text.hasPrefix("[\"EVENT\""),
      let array = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [Any],
      array.count >= 2, let event = array[1] as? [String: Any]
    else { return nil }
    return event["id"] as? String
  }

  /// A kind-1 note signed by a fresh identity (the relays echo it, and the manager verifies
  /// what it receives).
  static func event(text: String, counter: Int) -> NostrEvent {
    do {
      let identity = try NostrIdentity.generate()
      return try NostrEvent(
        pubkey: identity.publicKeyHex, createdAt: Date(), kind: .textNote, tags: [], content: text
      ).sign(with: identity.schnorrSigningKey())
    } catch {
      fatalError("signing a note: \(error)")
    }
  }
}

/// TorURLSession's current route (it publishes none): checked after each action, on each
/// activation change and before each network event, from any thread.
final class ProxyModeTracker: @unchecked Sendable {
  private let lock = NSLock()
  private var last: String?

  func check(_ events: EventStream) {
    let mode = TorURLSession.shared.session.configuration.socksProxy == nil ? "direct" : "tor"
    lock.withLock {
      guard mode != last else { return }
      last = mode
      events.record("state", ["component": "session", "field": "proxyMode", "value": mode])
    }
  }
}
