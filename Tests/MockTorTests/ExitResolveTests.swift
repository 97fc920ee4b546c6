import FailClosedSupport
import SOCKS
import Testing

@testable import MockTor

/// RESOLVE (torsocks' way to keep names off the device): a name the mock's map does not know
/// is answered by the exit's resolver when the upstream has one (the sandbox's answers as the
/// world does), and fails without one, as it always did.
@Suite struct ExitResolveTests {
  struct WorldExit: MockTorUpstream {
    func connect(to address: SOCKSAddress, port: UInt16) throws -> Socket {
      throw MockTorUpstreamFailure(reply: .generalFailure)
    }
    func resolve(_ name: String) -> SOCKSAddress? { .ipv4([10, 66, 1, 80]) }
  }

  struct NoResolver: MockTorUpstream {
    func connect(to address: SOCKSAddress, port: UInt16) throws -> Socket {
      throw MockTorUpstreamFailure(reply: .generalFailure)
    }
  }

  static let request = SOCKSRequest(
    version: .socks5, command: .resolve, address: .hostname("web.example"), port: 0)

  @Test func theExitAnswersANameTheMapDoesNotKnow() {
    let (_, answered) = StreamAnswers.resolve(Self.request, DestinationMap(), upstream: WorldExit())
    #expect(answered.result == .resolved)
    #expect(answered.answer == "10.66.1.80")
    // Canaries: no resolver at the exit, or no upstream at all: the name is not resolved.
    let (_, none) = StreamAnswers.resolve(Self.request, DestinationMap(), upstream: NoResolver())
    #expect(none.result == .resolveFailed)
    let (_, alone) = StreamAnswers.resolve(Self.request, DestinationMap())
    #expect(alone.result == .resolveFailed)
  }
}
