import Foundation
import IPtProxyUI
import Tor

/// What Onion Browser's UIKit side does with the Tor layer, for the scenario's actions: the
/// calls the app delegate, scene delegate and view controllers make into OnionManager (2.X) or
/// TorManager (3.X), and the decisions about when a URL loads, each after the lines it follows.
/// These files import UIKit and cannot compile here, so this is the harness's reading of them
/// (docs/onion-browser-source.md); the Tor layer it calls is Onion Browser's own code.
/// Everything runs on the main queue, as UIKit's delegates do.
final class OnionBrowserHarness: NSObject {
  private var launched = false
  private var ready = false
  private var watching = false
  /// The app is ending: the UI no longer looks at the manager (its last state is not an event
  /// of the run; the model's app ends the same way).
  private var terminating = false
  private let loader = PageLoader()

  func perform(_ action: HarnessAction) {
    var fields: [String: String] = ["action": action.name]
    if let url = action.url { fields["argument"] = url }
    if let status = action.status { fields["argument"] = status }
    EventStream.shared.record("action", fields)
    switch action.name {
    case "start": launch()
    case "open-url": open(action.url ?? "")
    case "background": didEnterBackground()
    case "foreground": didBecomeActive()
    case "path-change":
      // Reachability's notification, which IpSupport turns into its callbacks.
      IpSupport.shared.pathChanged(satisfied: action.status != "unsatisfied")
    default: break
    }
    look()
  }

  /// iOS delivers only the URL schemes the app registers (its Info.plist); others never reach
  /// the app.
  private func registered(_ url: String) -> URL? {
    guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(),
      harnessSchemes.contains(scheme)
    else { return nil }
    return parsed
  }

  private func request(_ url: String, _ phase: String, source: String? = nil) {
    var fields = ["url": url, "via": "tor", "phase": phase]
    if let source { fields["source"] = source }
    EventStream.shared.record("request", fields)
  }

  /// Every 0.15 s, as the UI looks at the manager's state.
  private func watch() {
    guard !watching else { return }
    watching = true
    func tick() {
      guard !terminating else { return }
      look()
      DispatchQueue.main.asyncAfter(deadline: .now() + 0.15) { tick() }
    }
    tick()
  }

  private func setReady(_ value: Bool) {
    guard value != ready else { return }
    ready = value
    EventStream.shared.record("state", ["component": "tor", "field": "isReady", "value": value])
  }

  #if ONION_MANAGER
    private var lastState: OnionManager.TorState?

    /// ConnectingViewController.swift @9a17dd4f l.102-109: the first screen sets the bridges
    /// and starts tor with itself as the delegate.
    private func launch() {
      guard !launched else { return }
      launched = true
      OnionManager.shared.setTransportConf(
        transport: Settings.transport, customBridges: Settings.customBridges)
      OnionManager.shared.startTor(delegate: self)
      watch()
    }

    /// AppDelegate.swift @9a17dd4f l.236-241: the URL (withFixedScheme, URL+Helpers.swift
    /// l.25-42, Onion Browser's own) is kept in Settings.openNewUrlOnStart; iOS then makes the
    /// app active (l.243-294).
    private func open(_ url: String) {
      guard let parsed = registered(url) else { return request(url, "ignored") }
      Settings.openNewUrlOnStart = parsed.withFixedScheme
      request(Settings.openNewUrlOnStart?.absoluteString ?? url, "pending", source: url)
      didBecomeActive()
    }

    /// AppDelegate.swift l.284-293: tor not started or connected: startTor; else
    /// torConnFinished, which shows the browser (and opens the pending URL). Before the launch
    /// (the startup phase, l.279-283) nothing.
    private func didBecomeActive() {
      guard launched else { return }
      let manager = OnionManager.shared
      if manager.state != .started && manager.state != .connected {
        manager.startTor(delegate: self)
      } else {
        torConnFinished()
      }
    }

    /// AppDelegate.swift l.206-232: stopTor unless stopped.
    private func didEnterBackground() {
      if OnionManager.shared.state != .stopped {
        OnionManager.shared.stopTor()
      }
    }

    /// 2.X's applicationWillTerminate (l.296-301) does nothing to tor: it dies with the app.
    func terminate() { terminating = true }

    /// The manager's state as the UI would see it; connected is ready.
    private func look() {
      let state = OnionManager.shared.state
      if state != lastState {
        lastState = state
        EventStream.shared.record(
          "state", ["component": "tor", "field": "state", "value": "\(state)"])
      }
      setReady(state == .connected)
    }

    private func load(_ url: URL) {
      // 2.X's web views reach tor's SOCKS port at AppDelegate.socksProxyPort.
      loader.load(url.absoluteString, socksHost: "127.0.0.1", socksPort: AppDelegate.socksProxyPort)
    }
  #elseif TOR_MANAGER
    private var lastStatus: TorManager.Status?

    /// StartTorViewController.swift @44edf9a8 l.82-109: start with the stored transport; the
    /// completion's error is shown, success reloads the tabs' web views.
    private func launch() {
      guard !launched else { return }
      launched = true
      TorManager.shared.start(Settings.transport) { _ in
      } _: { error in
        if let error {
          EventStream.shared.record(
            "tor", ["phase": "failed", "detail": error.localizedDescription])
        }
      }
      watch()
    }

    /// SceneDelegate.swift @44edf9a8 l.124-143: `onionbrowser:` is Orbot's callback
    /// (token-callback, main); any other URL opens a new tab with withFixedScheme
    /// (URL+Helpers.swift l.25-42, Onion Browser's own), whose navigation is decided by
    /// Tab+WKNavigationDelegate.swift l.27-35.
    private func open(_ url: String) {
      guard let parsed = registered(url) else { return request(url, "ignored") }
      if let components = URLComponents(url: parsed, resolvingAgainstBaseURL: true),
        components.scheme == "onionbrowser"
      {
        return request(url, "callback", source: url)
      }
      guard let fixed = parsed.withFixedScheme else { return request(url, "ignored") }
      // l.27-29: OrbotManager.allowRequests() (l.164-167 with the built-in tor): TorManager's
      // status is started; l.31-35: the tab's proxy configuration (Tab.swift l.464-473: set
      // from TorManager.torSocks5 when the tab is set up) is not empty.
      guard TorManager.shared.status == .started, let proxy = TorManager.shared.torSocks5 else {
        return request(fixed.absoluteString, "cancelled", source: url)
      }
      guard case .hostPort(let host, let port) = proxy else {
        return request(fixed.absoluteString, "cancelled", source: url)
      }
      loader.load(
        fixed.absoluteString, socksHost: host.debugDescription, socksPort: Int(port.rawValue))
    }

    /// 3.X's scenes do nothing to tor on background or foreground.
    private func didBecomeActive() {}
    private func didEnterBackground() {}

    /// AppDelegate.swift @44edf9a8 l.96-104 (applicationWillTerminate): TorManager.stop().
    func terminate() {
      terminating = true
      TorManager.shared.stop()
    }

    private func look() {
      let status = TorManager.shared.status
      if status != lastStatus {
        lastStatus = status
        EventStream.shared.record(
          "state", ["component": "tor", "field": "status", "value": status.rawValue])
        if status == .started, let proxy = TorManager.shared.torSocks5 {
          EventStream.shared.record("tor", ["phase": "socks", "detail": proxy.debugDescription])
        }
      }
      setReady(status == .started)
    }
  #endif
}

#if ONION_MANAGER
  /// Endless/Info.plist @9a17dd4f l.30-36: onionhttp, onionhttps, http, https.
  let harnessSchemes: Set<String> = ["onionhttp", "onionhttps", "http", "https"]
  let harnessVersion = "onion-browser-2 (OnionManager.swift)"

  extension OnionBrowserHarness: OnionManagerDelegate {
    /// AppDelegate.swift l.450-452: ignored.
    func torConnProgress(_ progress: Int) {}

    /// AppDelegate.swift l.454-468 (and ConnectingViewController's): on the main queue, the
    /// browser becomes visible and opens Settings.openNewUrlOnStart
    /// (BrowsingViewController.becomesVisible), once.
    func torConnFinished() {
      DispatchQueue.main.async {
        self.look()
        if let url = Settings.openNewUrlOnStart {
          Settings.openNewUrlOnStart = nil
          self.load(url)
        }
      }
    }

    /// AppDelegate.swift l.470-474: the guard gave up; the UI is shown anyway.
    func torConnDifficulties() {
      EventStream.shared.record(
        "tor",
        [
          "phase": "problem", "reason": "no-progress",
          "detail": "OnionManager's connection guard: no bootstrap progress for 15 s",
        ])
      torConnFinished()
    }
  }
#elseif TOR_MANAGER
  /// Onion Browser 3.X's Info.plist: onionhttp, onionhttps, http, https and onionbrowser.
  let harnessSchemes: Set<String> = ["onionhttp", "onionhttps", "http", "https", "onionbrowser"]
  let harnessVersion = "onion-browser-3 (TorManager.swift)"
#endif
