/// The apps the project models, as a set: which of them act on a verb or emit an event.
public struct AppFamilies: OptionSet, Sendable, Hashable {
  public let rawValue: Int
  public init(rawValue: Int) { self.rawValue = rawValue }
  /// bitchat: its model's profiles (bitchat, hardened, naive-port) and its own code.
  public static let bitchat = AppFamilies(rawValue: 1)
  /// Onion Browser, any version.
  public static let onionBrowser = AppFamilies(rawValue: 2)
  public static let all: AppFamilies = [.bitchat, .onionBrowser]
}
