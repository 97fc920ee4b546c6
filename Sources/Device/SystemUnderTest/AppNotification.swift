/// bitchat's notifications (Notification.Name in the app), posted on ``NotificationBus``.
public enum AppNotification: Sendable, Equatable {
  case torWillStart
  case torDidBecomeReady
  case torWillRestart
  case torBootstrapDidStall
  /// userInfo ["enabled": Bool] in bitchat.
  case torUserPreferenceChanged(enabled: Bool)
  /// GeoRelayDirectory's own refresh notification.
  case geoRelayDirectoryDidRefresh

  public var name: String {
    switch self {
    case .torWillStart: return "TorWillStart"
    case .torDidBecomeReady: return "TorDidBecomeReady"
    case .torWillRestart: return "TorWillRestart"
    case .torBootstrapDidStall: return "TorBootstrapDidStall"
    case .torUserPreferenceChanged: return "TorUserPreferenceChanged"
    case .geoRelayDirectoryDidRefresh: return "geoRelayDirectoryDidRefresh"
    }
  }
}

/// A NotificationCenter for the modelled app: observers run synchronously on the app actor when
/// a notification is posted (as bitchat's main-queue observers do), and every post is logged.
@AppActor public final class NotificationBus {
  public typealias Observer = @AppActor (AppNotification) -> Void

  private var observers: [Int: Observer] = [:]
  private var nextToken = 0
  private let log: AppEventLog

  public nonisolated init(log: AppEventLog) { self.log = log }

  @discardableResult
  public func observe(_ observer: @escaping Observer) -> Int {
    nextToken += 1
    observers[nextToken] = observer
    return nextToken
  }

  public func remove(_ token: Int) { observers[token] = nil }

  public func post(_ notification: AppNotification) {
    var fields: [String: EventValue] = ["name": .string(notification.name)]
    if case .torUserPreferenceChanged(let enabled) = notification {
      fields["enabled"] = .bool(enabled)
    }
    log.record(.notification, fields)
    for token in observers.keys.sorted() {
      observers[token]?(notification)
    }
  }
}
