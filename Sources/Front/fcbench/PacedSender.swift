import FailClosedSupport
import Foundation
import Sandbox

/// Sends one message again and again on sockets at a target rate (or as fast as it can), for
/// the capture-fidelity benchmark: one thread per socket, each paced by catching up with its
/// share of `rate × elapsed` after short sleeps, in batches of sendmmsg, so packets leave in
/// small bursts rather than one per timer tick. The sockets are connected UDP sockets (the
/// message is the datagram's payload) or AF_PACKET sockets bound to the device's link (the
/// message is a whole Ethernet frame: see ``PacketRingSender/openSockets``).
struct PacedSender: FidelitySender {
  typealias Outcome = SendOutcome

  /// Connected UDP sockets or bound AF_PACKET sockets, one sending thread each.
  let sockets: [Int32]
  let message: [UInt8]
  var batch = 64
  var name = "connected UDP sockets (sendmmsg)"
  var threads: Int { sockets.count }

  /// Sends for `seconds` at `rate` packets per second in all; nil sends as fast as the
  /// threads can. Blocks until every thread is done.
  func send(rate: Double?, seconds: Double) -> Outcome {
    let share = rate.map { $0 / Double(sockets.count) }
    let results = Locked<[Outcome]>([])
    let group = DispatchGroup()
    for fd in sockets {
      group.enter()
      let message = message
      let batch = batch
      let thread = Thread {
        let outcome = Self.sendFrom(
          fd, message: message, batch: batch, rate: share, seconds: seconds)
        results.withLock { $0.append(outcome) }
        group.leave()
      }
      thread.start()
    }
    group.wait()
    return SendOutcome.combined(results.withLock { $0 })
  }

  private static func sendFrom(
    _ fd: Int32, message: [UInt8], batch: Int, rate: Double?, seconds: Double
  )
    -> Outcome
  {
    let clock = SystemClock()
    let startCPU = SendOutcome.threadCPUSeconds()
    var outcome = Outcome()
    let payloadBytes = message.count
    let payload = UnsafeMutableRawPointer.allocate(byteCount: payloadBytes, alignment: 8)
    message.withUnsafeBytes { payload.copyMemory(from: $0.baseAddress!, byteCount: payloadBytes) }
    defer { payload.deallocate() }
    var vector = iovec(iov_base: payload, iov_len: payloadBytes)
    withUnsafeMutablePointer(to: &vector) { vectorPointer in
      var messages = [MultipleMessageHeader](
        repeating: MultipleMessageHeader(header: msghdr(), length: 0), count: batch)
      for index in messages.indices {
        messages[index].header.msg_iov = vectorPointer
        messages[index].header.msg_iovlen = 1
      }
      while true {
        outcome.seconds = clock.now
        if outcome.seconds >= seconds { break }
        let done = outcome.sent + outcome.failed
        let due = rate.map { Int($0 * outcome.seconds) + 1 } ?? (done + batch)
        let count = min(due - done, batch)
        if count <= 0 {
          // Ahead of schedule: sleep until the next packet is due (20 us to 1 ms).
          let wait = (Double(done + 1) / (rate ?? 1) - outcome.seconds) * 1e6
          usleep(UInt32(max(20, min(1000, wait))))
          continue
        }
        let sent = sendMultiple(fd, &messages, UInt32(count), Int32(MSG_NOSIGNAL))
        if sent > 0 {
          outcome.sent += Int(sent)
          outcome.failed += count - Int(sent)
        } else {
          outcome.failed += count
        }
      }
    }
    outcome.cpuSeconds = SendOutcome.threadCPUSeconds() - startCPU
    return outcome
  }
}

/// C's struct mmsghdr (hidden behind _GNU_SOURCE in the Glibc overlay): same layout.
struct MultipleMessageHeader {
  var header: msghdr
  var length: UInt32
}

private typealias SendMultipleFunction =
  @convention(c) (Int32, UnsafeMutableRawPointer, UInt32, Int32) -> Int32
nonisolated(unsafe) private let sendMultiplePointer = dlsym(
  UnsafeMutableRawPointer(bitPattern: 0), "sendmmsg")

/// sendmmsg(2), looked up by name; falls back to one send per call when it is missing.
private func sendMultiple(
  _ fd: Int32, _ messages: UnsafeMutablePointer<MultipleMessageHeader>, _ count: UInt32,
  _ flags: Int32
) -> Int32 {
  guard let pointer = sendMultiplePointer else {
    let header = messages.pointee.header
    return send(fd, header.msg_iov.pointee.iov_base, header.msg_iov.pointee.iov_len, flags) >= 0
      ? 1 : -1
  }
  return unsafeBitCast(pointer, to: SendMultipleFunction.self)(
    fd, UnsafeMutableRawPointer(messages), count, flags)
}
