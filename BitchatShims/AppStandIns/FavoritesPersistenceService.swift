// Stands in for bitchat/Services/FavoritesPersistenceService.swift, which keeps favourites in
// the Keychain (Security's SecItem API: Apple only). Only the mutual favourites matter here.
import Combine
import Foundation

/// bitchat's FavoritesPersistenceService: only the mutual favourites matter here.
@MainActor
final class FavoritesPersistenceService: ObservableObject {
  static let shared = FavoritesPersistenceService()
  @Published var mutualFavorites: Set<Data> = []
}
