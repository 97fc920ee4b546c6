// Stands in for bitchat's LocationChannelManager, which is built on CoreLocation
// (CLLocationManager, CLAuthorizationStatus: Apple only). The driver sets its permission state
// (revoked or granted); nothing here decides anything about Tor.
import Combine
import Foundation

/// bitchat's LocationChannelManager: the location permission and the selected channel.
@MainActor
final class LocationChannelManager: ObservableObject {
  enum PermissionState: Equatable {
    case notDetermined
    case denied
    case restricted
    case authorized
  }

  static let shared = LocationChannelManager()

  @Published var permissionState: PermissionState = .authorized
  @Published var selectedChannel: ChannelID = .mesh
}
