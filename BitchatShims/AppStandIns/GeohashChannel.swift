// Stands in for bitchat/Protocols/LocationChannel.swift (GeohashChannelLevel, GeohashChannel,
// ChannelID) at a commit where that file cannot be compiled here; where it can, the lane
// compiles bitchat's own and leaves this out (BitchatSourceClosure).
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
