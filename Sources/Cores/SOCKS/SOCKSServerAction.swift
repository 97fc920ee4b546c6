/// What the server handshake wants done after one step: drop `consumed` bytes from the input
/// buffer, send `reply`, then act on `outcome`.
public struct SOCKSServerAction: Equatable, Sendable {
  public enum Outcome: Equatable, Sendable {
    /// The message in the buffer is incomplete: read more and call again.
    case needMoreInput
    /// A message was handled; call again with the rest of the buffer (it may be empty).
    case continueHandshake
    /// The handshake is complete. Bytes left in the buffer are the client's (optimistic)
    /// data for the stream. The caller sends the request's reply once it knows the outcome.
    case finished(SOCKSRequest)
    /// Send `reply` (possibly empty: Tor then just closes) and close the connection.
    case failed(SOCKSError)
  }

  public var consumed: Int
  public var reply: [UInt8]
  public var outcome: Outcome

  public init(consumed: Int, reply: [UInt8], outcome: Outcome) {
    self.consumed = consumed
    self.reply = reply
    self.outcome = outcome
  }

  static let needMore = SOCKSServerAction(consumed: 0, reply: [], outcome: .needMoreInput)
}
