// Stand-ins for the bitchat app types that its Tor-layer files mention but that live elsewhere
// in the app (location channels, favourites; Nostr events in NostrEvent.swift). Compiled into the same module as
// those files, as in the app. The driver sets their state (location permission revoked or
// granted); nothing here decides anything about Tor.
import Combine
import Foundation

/// bitchat's GeohashChannelLevel: how precise a location channel is.
enum GeohashChannelLevel: String, Codable, CaseIterable, Hashable {
  case building, block, neighborhood, city, province, region
}

/// bitchat's GeohashChannel: a location channel at some precision.
struct GeohashChannel: Hashable, Codable {
  let level: GeohashChannelLevel
  let geohash: String
}

/// bitchat's ChannelID: the mesh, or a location channel.
enum ChannelID: Hashable {
  case mesh
  case location(GeohashChannel)
}

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

/// bitchat's FavoritesPersistenceService: only the mutual favourites matter here.
@MainActor
final class FavoritesPersistenceService: ObservableObject {
  static let shared = FavoritesPersistenceService()
  @Published var mutualFavorites: Set<Data> = []
}

/// bitchat's NostrProtocol, the event kinds these files name.
enum NostrProtocol {
  enum EventKind: Int {
    case metadata = 0
    case textNote = 1
    case dm = 14
    case seal = 13
    case giftWrap = 1059
    case ephemeralEvent = 20000
    case geohashPresence = 20001
    case courierDrop = 24_242
  }
}
