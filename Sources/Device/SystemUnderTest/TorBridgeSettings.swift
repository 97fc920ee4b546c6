import TorControl

/// The app's bridge setting: key `tor.bridges` in the store (preferences.json), an array of
/// bridge lines as Tor Browser and Onion Browser take them (`obfs4 IP:PORT FP cert=... iat-mode=0`,
/// an optional leading `Bridge`). Validated line by line; an error names the index and the part.
public enum TorBridgeSettings {
  public static let storeKey = "tor.bridges"

  /// What the Tor client is started with, given the profile and the setting.
  public enum Decision: Equatable, Sendable {
    /// No bridges configured: tor connects to the network's relays directly.
    case none
    /// Bridges configured, but the profile has no bridge support (bitchat's gap): tor starts
    /// without them.
    case ignored(count: Int)
    /// Only these bridges (UseBridges 1).
    case use([BridgeLine])
    /// The setting is malformed: failing closed, tor is not started at all (never without the
    /// bridges the user asked for).
    case invalid(TorBridgeSettingsError)
  }

  /// The raw lines in the store; an error when the key holds anything but an array of strings.
  public static func lines(in store: KeyValueStore) throws -> [String] {
    guard let value = store.object(forKey: storeKey) else { return [] }
    guard let array = value as? [Any] else {
      throw TorBridgeSettingsError("\(storeKey): expected an array of bridge lines")
    }
    var lines: [String] = []
    for (index, element) in array.enumerated() {
      guard let line = element as? String else {
        throw TorBridgeSettingsError("\(storeKey)[\(index)]: expected a string (a bridge line)")
      }
      lines.append(line)
    }
    return lines
  }

  /// Parses every line; the first malformed one is the error, with its index.
  public static func validate(_ lines: [String]) throws -> [BridgeLine] {
    var bridges: [BridgeLine] = []
    for (index, line) in lines.enumerated() {
      do {
        bridges.append(try BridgeLine(line))
      } catch let error as BridgeLine.ParseError {
        throw TorBridgeSettingsError("\(storeKey)[\(index)]: \(error.reason)")
      } catch {
        throw TorBridgeSettingsError("\(storeKey)[\(index)]: \(error)")
      }
    }
    return bridges
  }

  /// Stores `lines` as the setting (the driver's `--bridge`), after validating them.
  public static func write(_ lines: [String], to store: KeyValueStore) throws {
    _ = try validate(lines)
    store.set(lines, forKey: storeKey)
  }

  /// The profile's rule applied to the store's setting. A profile without bridge support
  /// ignores the setting, malformed or not (it never reads it); one with bridge support uses
  /// it, or refuses to start when it is malformed.
  public static func decide(store: KeyValueStore, profile: SUTProfile) -> Decision {
    let lines: [String]
    do {
      lines = try self.lines(in: store)
    } catch {
      return profile.usesBridges ? .invalid(TorBridgeSettingsError("\(error)")) : .ignored(count: 1)
    }
    if lines.isEmpty { return .none }
    guard profile.usesBridges else { return .ignored(count: lines.count) }
    do {
      return .use(try validate(lines))
    } catch {
      return .invalid(TorBridgeSettingsError("\(error)"))
    }
  }
}

public struct TorBridgeSettingsError: Error, Equatable, CustomStringConvertible, Sendable {
  public let description: String
  public init(_ description: String) { self.description = description }
}
