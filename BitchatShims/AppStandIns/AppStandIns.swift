// Stand-ins for the bitchat app types that its Tor-layer files mention but that live elsewhere
// in the app (location channels, favourites, Nostr events). Compiled into the same module as
// those files, as in the app. The driver sets their state (location permission revoked or
// granted); nothing here decides anything about Tor.
import Combine
import Foundation

/// bitchat's GeohashChannel: a location channel at some precision.
struct GeohashChannel: Hashable, Codable {
  let level: Int
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

/// bitchat's NostrEvent (NIP-01). The stand-in cannot check Schnorr signatures (no secp256k1
/// here): an event is valid when its id and signature have the right shape. The harness's
/// relays only echo the driver's own events.
struct NostrEvent: Codable {
  var id: String
  var pubkey: String
  var created_at: Int
  var kind: Int
  var tags: [[String]]
  var content: String
  var sig: String?

  init(
    id: String, pubkey: String, created_at: Int, kind: Int, tags: [[String]], content: String,
    sig: String?
  ) {
    self.id = id
    self.pubkey = pubkey
    self.created_at = created_at
    self.kind = kind
    self.tags = tags
    self.content = content
    self.sig = sig
  }

  init(from dictionary: [String: Any]) throws {
    guard let id = dictionary["id"] as? String, let pubkey = dictionary["pubkey"] as? String,
      let createdAt = dictionary["created_at"] as? Int, let kind = dictionary["kind"] as? Int,
      let content = dictionary["content"] as? String
    else { throw NostrEventError.malformed }
    self.init(
      id: id, pubkey: pubkey, created_at: createdAt, kind: kind,
      tags: dictionary["tags"] as? [[String]] ?? [], content: content,
      sig: dictionary["sig"] as? String)
  }

  func isValidSignature() -> Bool {
    let hex = CharacterSet(charactersIn: "0123456789abcdef")
    func isHex(_ text: String, _ count: Int) -> Bool {
      text.count == count && text.unicodeScalars.allSatisfy(hex.contains)
    }
    return isHex(id, 64) && isHex(sig ?? "", 128)
  }
}

enum NostrEventError: Error { case malformed }
