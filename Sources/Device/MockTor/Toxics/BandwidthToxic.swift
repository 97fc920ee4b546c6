/// bandwidth=KBPS: limits the flow towards the client, in tenths of a second's worth at a time.
public struct BandwidthToxic: StreamToxic, Equatable {
  public static let name = "bandwidth"
  public static let valueName: String? = "KBPS"
  public static let summary = "limit the flow towards the client, in kilobytes per second"

  /// Bytes per second (at least 1).
  public let bytesPerSecond: Int

  public init(bytesPerSecond: Int) { self.bytesPerSecond = max(1, bytesPerSecond) }

  public init(value: String?, name: String) throws(ToxicValueError) {
    let kilobytes = try ToxicValueError.number(value, name: name, unit: "kilobytes per second")
    bytesPerSecond = max(1, Int(kilobytes * 1024))
  }

  public var directions: Set<StreamDirection> { [.downstream] }

  public func readLimit(_ direction: StreamDirection) -> Int? {
    direction == .downstream ? max(1, bytesPerSecond / 10) : nil
  }

  public func delay(after count: Int, _ direction: StreamDirection) -> Double {
    direction == .downstream ? Double(count) / Double(bytesPerSecond) : 0
  }

  public var description: String { "bandwidth=\(bytesPerSecond / 1024)" }
}
