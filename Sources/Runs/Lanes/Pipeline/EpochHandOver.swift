import FailClosedSupport
import Foundation

/// The pipeline's side of the run's epoch hand-over (`--epoch stdin`, ``EpochReceiver``): the
/// processes that share the run's clock start, set up, and each says `ready` on its standard
/// input (a stream socket the pipeline holds); only then is the epoch fixed and handed to all
/// of them. What is left for them after the hand-over (the mock opens its listeners, the app
/// builds its objects) is a small part of what they did before it, and takes longer on a
/// loaded machine as their start did: the lead is a floor or the time they took to say
/// ready, whichever is longer, measured on this run. A process that says `started` past the
/// epoch shows the lead was still too short.
public final class EpochHandOver {
  /// The lead as a share of the time from the first spawn to the last `ready`.
  static let leadShareOfSetUp = 1.0
  private let created = MonotonicInstant.now
  /// The lead given, once the epoch is fixed.
  private(set) var lead: Double?

  struct Participant {
    var name: String
    /// The pipeline's end of the socket.
    var descriptor: Int32
    /// The process's end, closed here once it has been spawned.
    var processEnd: Int32
    /// Where its output goes: its last lines say why it never became ready.
    var output: String
    var buffer: [UInt8] = []
    var started: Double?
  }

  private(set) var participants: [Participant] = []

  deinit {
    for participant in participants {
      close(participant.descriptor)
      if participant.processEnd >= 0 { close(participant.processEnd) }
    }
  }

  /// A new participant: the descriptor to give the process as its standard input.
  func add(_ name: String, output: String) throws -> Int32 {
    var ends: [Int32] = [-1, -1]
    guard
      socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0
    else { throw SystemError("socketpair (epoch hand-over for \(name))") }
    participants.append(
      Participant(name: name, descriptor: ends[0], processEnd: ends[1], output: output))
    return ends[1]
  }

  /// Waits (at most `timeout` real seconds) until every participant is ready, fixes the epoch
  /// at least `minimumLead` ahead and hands it over. Throws when a process ends or stays
  /// silent, naming it with its last output.
  /// With `leadFollowsSetUp` false (the event clock, whose time 0 waits for every `started`
  /// anyway) the lead is `minimumLead` alone.
  func fix(minimumLead: Double, timeout: Double, leadFollowsSetUp: Bool = true) throws
    -> MonotonicInstant
  {
    for index in participants.indices where participants[index].processEnd >= 0 {
      close(participants[index].processEnd)
      participants[index].processEnd = -1
    }
    let deadline = MonotonicInstant.now.advanced(bySeconds: timeout)
    for index in participants.indices {
      try waitForLine(index, deadline: deadline) { $0 == "ready" }
    }
    let setUp = MonotonicInstant.now.seconds(since: created)
    let lead = leadFollowsSetUp ? max(minimumLead, setUp * Self.leadShareOfSetUp) : minimumLead
    self.lead = lead
    let epoch = MonotonicInstant.now.advanced(bySeconds: lead)
    for index in participants.indices {
      try handOver(epoch.description + "\n", to: index)
    }
    return epoch
  }

  /// Reads the `started` lines that have arrived, without waiting.
  func collect() {
    for index in participants.indices where participants[index].started == nil {
      while let line = readLine(index, timeoutMilliseconds: 0), noteStarted(index, line) == false {}
    }
  }

  /// Whether every participant has said `started` (its last set-up step is done).
  var allStarted: Bool { participants.allSatisfy { $0.started != nil } }

  /// Each participant that said `started` past the epoch, and by how much (real seconds).
  var lateStarts: [(name: String, seconds: Double)] {
    participants.compactMap { participant in
      participant.started.flatMap { $0 > 0 ? (participant.name, $0) : nil }
    }
  }

  /// Whether `line` is the `started SECONDS` line (recorded).
  @discardableResult
  private func noteStarted(_ index: Int, _ line: String) -> Bool {
    guard line.hasPrefix("started "), let seconds = Double(line.dropFirst("started ".count))
    else { return false }
    participants[index].started = seconds
    return true
  }

  private func waitForLine(
    _ index: Int, deadline: MonotonicInstant, _ matches: (String) -> Bool
  ) throws {
    let name = participants[index].name
    while true {
      let left = deadline.seconds(since: .now)
      guard left > 0 else {
        throw EpochHandOverError(
          "\(name) did not answer the epoch hand-over in time: "
            + LanePipeline.lastLines(participants[index].output))
      }
      guard let line = readLine(index, timeoutMilliseconds: Int32(min(left * 1000 + 1, 1000)))
      else {
        if participants[index].descriptor < 0 {
          throw EpochHandOverError(
            "\(name) ended before the run's epoch: "
              + LanePipeline.lastLines(participants[index].output))
        }
        continue
      }
      if matches(line) { return }
    }
  }

  /// One line from the participant, waiting at most `timeoutMilliseconds`; nil when none came
  /// (the descriptor is set to -1 once the process has closed its end).
  private func readLine(_ index: Int, timeoutMilliseconds: Int32) -> String? {
    while true {
      if let newline = participants[index].buffer.firstIndex(of: UInt8(ascii: "\n")) {
        let line = String(decoding: participants[index].buffer[..<newline], as: UTF8.self)
        participants[index].buffer.removeSubrange(...newline)
        return line
      }
      let descriptor = participants[index].descriptor
      guard descriptor >= 0 else { return nil }
      var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
      let ready = poll(&poller, 1, timeoutMilliseconds)
      if ready < 0 && errno == EINTR { continue }
      guard ready > 0 else { return nil }
      var chunk = [UInt8](repeating: 0, count: 256)
      let count = read(descriptor, &chunk, chunk.count)
      if count < 0 && errno == EINTR { continue }
      if count <= 0 {
        close(descriptor)
        participants[index].descriptor = -1
        return nil
      }
      participants[index].buffer += chunk[..<count]
    }
  }

  private func handOver(_ text: String, to index: Int) throws {
    let bytes = Array(text.utf8)
    let descriptor = participants[index].descriptor
    let written =
      descriptor < 0
      ? -1
      : bytes.withUnsafeBytes {
        Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
      }
    guard written == bytes.count else {
      throw EpochHandOverError(
        "\(participants[index].name) ended before the run's epoch: "
          + LanePipeline.lastLines(participants[index].output))
    }
  }
}

/// The hand-over failed: which process, and its last output.
struct EpochHandOverError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
