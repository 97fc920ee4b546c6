import FailClosedSupport
import Foundation
import MockTor
import SOCKS
import Testing

/// Each registered toxic on real sockets: a canary (the toxic's effect is seen by the client or
/// in the mock's log) and a control (the same stream without it is untouched). A delaying
/// toxic's canary runs on the real clock and asserts the least time the mock spent (a sleep is
/// never shorter than asked, however loaded the machine); the control runs on a frozen manual
/// clock and completes without the mock spending any time at all.
@Suite struct StreamToxicTests {
  static let body = String(repeating: "x", count: 20_000)

  /// A mock (ctor, ready at once) with web.test mapped to a one-page server, and `toxics` on
  /// web.test's streams.
  struct Rig {
    let web: TinyHTTPServer
    let mock: MockTor
    let proxy: SocketAddress

    init(_ toxics: StreamToxics?, clock: any HarnessClock = SystemClock()) throws {
      web = try TinyHTTPServer(body: StreamToxicTests.body)
      var map = DestinationMap()
      map.add("web.test", SocketAddress(bytes: [127, 0, 0, 1], port: web.port)!)
      mock = try makeMock(
        .ctor, destinations: map, faults: toxics.map { ["web.test": $0] } ?? [:]
      ) { $0.clock = clock }
      proxy = try #require(mock.socksAddress)
    }

    /// Fetches through the mock (on a thread of its own); returns the response (or the error)
    /// and the stream's log record.
    func fetchOnce() async throws -> (
      response: Result<String, any Error>, record: [String: EventLogValue]
    ) {
      let proxy = self.proxy
      let response = try await BlockingIO.run("test.fetch") {
        Result { try fetch(through: proxy, host: "web.test") }
      }
      return (response, try record())
    }

    /// The stream's record in the mock's log (after the mock stops).
    func record() throws -> [String: EventLogValue] {
      mock.stop()
      web.stop()
      return try #require(mock.eventLog.events("socks").first)
    }
  }

  static func seconds(_ value: EventLogValue?) -> Double {
    switch value {
    case .double(let seconds): return seconds
    case .int(let seconds): return Double(seconds)
    default: return -1
    }
  }

  // MARK: the registry

  @Test func everyRegisteredToxicReadsBackItsOwnSpelling() throws {
    let names = StreamToxics.registered.flatMap { [$0.name] + $0.aliases }
    #expect(Set(names).count == names.count, "a name or alias registered twice: \(names)")
    let samples = [
      "reply=0x2", "latency=200", "bandwidth=64", "reset_after=1000", "blackhole",
      "slow_close=300",
    ]
    #expect(samples.count == StreamToxics.registered.count, "a sample per registered toxic")
    for sample in samples {
      let toxics = try StreamToxics(parsing: sample)
      #expect(toxics.description == sample)
      #expect(toxics.toxics.count == 1)
    }
    let all = try StreamToxics(parsing: samples.reversed().joined(separator: ","))
    #expect(all.description == samples.joined(separator: ","), "written back in registry order")
    #expect(try StreamToxics(parsing: "reset_peer=5") == StreamToxics([ResetPeerToxic(bytes: 5)]))
    #expect(try StreamToxics(parsing: "timeout=0") == StreamToxics([BlackholeToxic()]))
    // blackhole's value is optional: bare, the request is never answered; with BYTES, the
    // stream goes silent part-way.
    let partWay = try StreamToxics(parsing: "blackhole=100")
    #expect(partWay == StreamToxics([BlackholeToxic(afterBytes: 100)]))
    #expect(partWay.description == "blackhole=100")
    #expect(StreamToxics.usage.contains { $0.hasPrefix("blackhole[=BYTES] ") })
  }

  @Test func badSpellingsNameTheToxicAndWhatItNeeds() {
    let cases: [(String, String)] = [
      ("", "empty"), ("explode", "unknown toxic 'explode' (use reply, latency"),
      ("latency=-1", "latency needs a number of milliseconds >= 0"),
      ("reply=0x00", "reply needs a failure code"), ("timeout=5", "only timeout=0"),
      ("bandwidth", "bandwidth needs a number of kilobytes per second"),
      ("blackhole=many", "blackhole needs a number of bytes"),
      ("reset_after=1e30", "reset_after needs at most 2^52 bytes"),
    ]
    for (spec, reason) in cases {
      do {
        _ = try StreamToxics(parsing: spec)
        Issue.record("'\(spec)' was accepted")
      } catch {
        #expect(error.description.contains(reason), "'\(spec)': \(error)")
      }
    }
  }

  @Test func eachToxicSaysWhichDirectionsItActsOn() {
    #expect(ReplyToxic(.notAllowedByRuleset).directions.isEmpty)
    #expect(LatencyToxic(seconds: 1).directions == [.downstream])
    #expect(BandwidthToxic(bytesPerSecond: 1024).directions == [.downstream])
    #expect(ResetPeerToxic(bytes: 1).directions == [.upstream, .downstream])
    #expect(BlackholeToxic().directions == [.upstream])
    #expect(BlackholeToxic(afterBytes: 1).directions == [.upstream, .downstream])
    #expect(SlowCloseToxic(seconds: 1).directions == [.downstream])
    // Shaping answers only in the directions declared.
    #expect(LatencyToxic(seconds: 1).delay(before: 10, .upstream) == 0)
    #expect(BandwidthToxic(bytesPerSecond: 1024).readLimit(.upstream) == nil)
    #expect(SlowCloseToxic(seconds: 1).delayBeforeClosing(.upstream) == 0)
  }

  // MARK: the control: no toxic

  @Test func withoutAToxicTheStreamIsUntouchedAndTakesNoMockTime() async throws {
    let rig = try Rig(nil, clock: ManualClock())
    let (response, record) = try await rig.fetchOnce()
    #expect(try response.get().hasSuffix(Self.body))
    #expect(record["outcome"]?.stringValue == "destination closed")
    #expect(Self.seconds(record["duration"]) == 0, "the clock never moved")
  }

  // MARK: reply

  @Test func replyAnswersWithItsCodeInsteadOfConnecting() async throws {
    let rig = try Rig(StreamToxics([ReplyToxic(.notAllowedByRuleset)]))
    let (response, record) = try await rig.fetchOnce()
    #expect(throws: SOCKSError(.rejected(.notAllowedByRuleset), at: 3)) { try response.get() }
    #expect(record["outcome"]?.stringValue == "fault")
    #expect(record["target"] == nil, "nothing was connected")
  }

  // MARK: latency

  @Test func latencyDelaysTheReplyAndEachChunkTowardsTheClient() async throws {
    let rig = try Rig(StreamToxics([LatencyToxic(seconds: 0.2)]))
    let (response, record) = try await rig.fetchOnce()
    #expect(try response.get().hasSuffix(Self.body), "delayed, not damaged")
    // The reply and at least one chunk of the response each waited 0.2 s of mock time.
    #expect(Self.seconds(record["duration"]) >= 0.4)
  }

  // MARK: bandwidth

  @Test func bandwidthPacesTheFlowTowardsTheClient() async throws {
    let rig = try Rig(StreamToxics([BandwidthToxic(bytesPerSecond: 102_400)]))
    let (response, record) = try await rig.fetchOnce()
    #expect(try response.get().hasSuffix(Self.body))
    let down = try #require(record["bytes_down"]?.intValue)
    #expect(down > Self.body.utf8.count)
    #expect(Self.seconds(record["duration"]) >= Double(down) / 102_400 - 0.01)
  }

  // MARK: reset_after

  @Test func resetAfterCutsTheStreamWithARSTOnceEnoughHasFlowed() async throws {
    let rig = try Rig(StreamToxics([ResetPeerToxic(bytes: 1000)]))
    let (response, record) = try await rig.fetchOnce()
    let received = (try? response.get()) ?? ""
    #expect(received.utf8.count < Self.body.utf8.count, "cut short")
    #expect(record["outcome"]?.stringValue?.hasPrefix("reset after") == true)
  }

  @Test func resetAfterCountsTheUpstreamToo() async throws {
    // The request alone (about 40 bytes towards the destination) passes the limit.
    let rig = try Rig(StreamToxics([ResetPeerToxic(bytes: 10)]))
    let (_, record) = try await rig.fetchOnce()
    #expect(record["outcome"]?.stringValue?.hasPrefix("reset after") == true)
    #expect(record["bytes_up"]?.intValue == 0, "reset before anything went upstream")
    #expect(record["bytes_down"]?.intValue == 0)
  }

  // MARK: blackhole

  @Test func blackholeNeverAnswersAndSwallowsWhatTheClientSends() throws {
    let request: [[UInt8]] = [
      [0x05, 0x01, 0x00], [0x05, 0x01, 0x00, 0x03, 0x08] + Array("web.test".utf8) + [0, 80],
    ]
    let rig = try Rig(StreamToxics([BlackholeToxic()]))
    let hole = try probe(rig.proxy, steps: request + [Array("GET / HTTP/1.0\r\n\r\n".utf8)])
    #expect(hole == ProbeResult(bytes: [0x05, 0x00], closed: false), "no reply, still open")
    let record = try rig.record()
    #expect(record["outcome"]?.stringValue == "blackholed")
    #expect(record["bytes_up"]?.intValue == 18, "the client's bytes were read and dropped")

    let control = try Rig(nil)
    let answered = try probe(control.proxy, steps: request)
    #expect(answered.bytes.count > 2 && answered.bytes[2...3] == [0x05, 0x00], "a success reply")
    _ = try control.record()
  }

  @Test func blackholeAfterBytesRelaysThatMuchThenGoesSilentWithoutClosing() throws {
    let get = Array("GET / HTTP/1.0\r\n\r\n".utf8)
    let request: [[UInt8]] = [
      [0x05, 0x01, 0x00], [0x05, 0x01, 0x00, 0x03, 0x08] + Array("web.test".utf8) + [0, 80], get,
    ]
    // The request (18 bytes) fits; the first byte of the answer would pass the limit.
    let rig = try Rig(StreamToxics([BlackholeToxic(afterBytes: get.count)]))
    let stalled = try probe(rig.proxy, steps: request)
    #expect(stalled.bytes.count == 12, "the greeting's and the connect's replies only")
    #expect(stalled.bytes[2...3] == [0x05, 0x00], "connected")
    #expect(!stalled.closed, "silent, not closed")
    let record = try rig.record()
    #expect(record["outcome"]?.stringValue == "blackholed after 18 bytes")
    #expect(record["bytes_up"]?.intValue == get.count, "the request reached the destination")
    #expect(record["bytes_down"]?.intValue == 0)

    // A client that stops sending after its request is held open all the same.
    let halfClosed = try Rig(StreamToxics([BlackholeToxic(afterBytes: get.count)]))
    let held = try probe(halfClosed.proxy, steps: request, thenStopSending: true)
    #expect(held.bytes.count == 12 && !held.closed, "silent, not closed")
    #expect(try halfClosed.record()["outcome"]?.stringValue == "blackholed after 18 bytes")

    // Control: the same request without the toxic gets the page.
    let control = try Rig(nil)
    let answered = try probe(control.proxy, steps: request)
    #expect(answered.bytes.count > 12 + Self.body.utf8.count)
    _ = try control.record()
  }

  // MARK: slow_close

  @Test func slowCloseHoldsTheCloseTowardsTheClient() async throws {
    let rig = try Rig(StreamToxics([SlowCloseToxic(seconds: 0.3)]))
    let (response, record) = try await rig.fetchOnce()
    #expect(try response.get().hasSuffix(Self.body))
    #expect(Self.seconds(record["duration"]) >= 0.3)
  }
}
