/// A capture or pcap-file failure, naming the interface or file and the place at fault.
public struct CaptureError: Error, CustomStringConvertible, Sendable, Equatable {
  public let message: String

  public init(_ message: String) { self.message = message }

  public var description: String { message }
}
