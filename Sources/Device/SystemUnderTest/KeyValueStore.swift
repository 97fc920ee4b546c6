import Foundation

/// A small persisted key-value store playing UserDefaults: values are JSON (Bool, numbers,
/// strings, arrays), kept in one JSON file when a path is given, in memory otherwise. A value
/// of the wrong type stays what it is, so "a non-Bool reads as on" can be tested.
public final class KeyValueStore: @unchecked Sendable {
  private let lock = NSLock()
  private var values: [String: Any]
  private let fileURL: URL?

  /// In-memory store.
  public init(values: [String: Any] = [:]) {
    self.values = values
    self.fileURL = nil
  }

  /// A store backed by `path`; a missing file is an empty store, an unreadable one an error
  /// naming the file.
  public init(path: String) throws {
    let url = URL(fileURLWithPath: path)
    self.fileURL = url
    if FileManager.default.fileExists(atPath: path) {
      let data = try Data(contentsOf: url)
      guard data.isEmpty || (try? JSONSerialization.jsonObject(with: data)) is [String: Any] else {
        throw KeyValueStoreError("\(path): not a JSON object of preferences")
      }
      values =
        data.isEmpty ? [:] : (try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:])
    } else {
      values = [:]
    }
  }

  public func object(forKey key: String) -> Any? { lock.withLock { values[key] } }

  public func stringArray(forKey key: String) -> [String]? {
    object(forKey: key) as? [String]
  }

  public func set(_ value: Any?, forKey key: String) {
    lock.withLock {
      values[key] = value
      persistLocked()
    }
  }

  private func persistLocked() {
    guard let fileURL else { return }
    guard JSONSerialization.isValidJSONObject(values),
      let data = try? JSONSerialization.data(withJSONObject: values, options: [.sortedKeys])
    else { return }
    try? data.write(to: fileURL, options: .atomic)
  }
}

public struct KeyValueStoreError: Error, CustomStringConvertible, Sendable {
  public let description: String
  public init(_ description: String) { self.description = description }
}
