import Foundation

/// A process's side of the run's epoch hand-over (`--epoch stdin`): the runner fixes the run's
/// time 0 only once every process that shares it has set up, so the lead it gives is what
/// the processes need, however slow their start under load. Standard input is a stream socket
/// the runner holds: the process writes `ready` on it once set up, reads the epoch's line (the
/// decimal nanoseconds ``MonotonicInstant/description`` writes), and after its last set-up
/// step writes `started SECONDS`, how far past the epoch that step ended (negative: before
/// it), so the runner can tell a lead that was too short.
public enum EpochReceiver {
  /// The option's value that asks for the hand-over.
  public static let optionValue = "stdin"

  /// Says `ready` on `descriptor` and waits for the epoch. Blocks: call it off the
  /// cooperative pool.
  public static func receive(descriptor: Int32 = 0) throws -> MonotonicInstant {
    try write("ready\n", to: descriptor)
    var line: [UInt8] = []
    var byte: UInt8 = 0
    while true {
      let count = read(descriptor, &byte, 1)
      if count < 0 && errno == EINTR { continue }
      if count < 0 { throw SystemError("--epoch stdin: reading the epoch") }
      if count == 0 {
        throw SystemError(
          "--epoch stdin: the runner closed standard input before the epoch", code: EPIPE)
      }
      if byte == UInt8(ascii: "\n") { break }
      line.append(byte)
      if line.count > 32 {
        throw SystemError("--epoch stdin: the epoch's line is longer than 32 bytes", code: EINVAL)
      }
    }
    let text = String(decoding: line, as: UTF8.self)
    guard let epoch = MonotonicInstant(text) else {
      throw SystemError(
        "--epoch stdin: expected CLOCK_MONOTONIC nanoseconds, got '\(text)'", code: EINVAL)
    }
    return epoch
  }

  /// After the last set-up step: how far past `epoch` it ended. Best effort: the runner may
  /// have gone.
  public static func reportStarted(epoch: MonotonicInstant, descriptor: Int32 = 0) {
    let late = MonotonicInstant.now.seconds(since: epoch)
    try? write("started \(String(format: "%.6f", late))\n", to: descriptor)
  }

  static func write(_ text: String, to descriptor: Int32) throws {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
      let count = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      if count <= 0 {
        throw SystemError(
          "--epoch stdin: standard input is not the runner's socket (writing '\(text.prefix(5))')")
      }
      bytes = bytes.dropFirst(count)
    }
  }
}
