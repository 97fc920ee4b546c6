// Stands in for bitchat/Nostr/NostrProtocol.swift's NostrProtocol, which imports CryptoKit and
// P256K (secp256k1 via Apple's CryptoKit and a Swift package the machine cannot fetch): the
// event kinds the Tor-layer files name.
import Foundation

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
