import BitchatSource
import Foundation
import Scenarios

/// leak-audit's side of the bitchat-source lane: which scenarios run on bitchat's own code,
/// and the driver built (or reused) for them.
enum BitchatSourceLane {
  /// With --sut bitchat-source: the mock lane's bitchat scenarios driven through Arti (the
  /// arti personality), the naive-port canary, bitchat-source files, and the real-Tor lane's
  /// bitchat scenarios (arti.h over Debian's tor). The hardened and onion-browser profiles are
  /// the model's own; the ctor personality is a control-port tor, which bitchat does not use.
  static func runsOnSource(_ scenario: Scenarios.Scenario) -> Bool {
    if scenario.lane == .realTor {
      return [.bitchat, .bitchatSource].contains(scenario.app.profile)
    }
    guard let plan = scenario.tor.mock, plan.personality == .arti else { return false }
    return [.bitchat, .naivePort, .bitchatSource].contains(scenario.app.profile)
  }

  /// A bitchat scenario as it runs on the source (profile bitchat-source, so the reports say
  /// so); the naive-port canary keeps its profile and runs on the linux-foundation transport.
  static func onSource(_ scenario: Scenarios.Scenario) -> Scenarios.Scenario {
    var scenario = scenario
    if scenario.app.profile == .bitchat { scenario.app.profile = .bitchatSource }
    return scenario
  }

  /// --sut, consistent with --bitchat-src on every command: a checkout given means bitchat's
  /// own code (as `app --bitchat-src` runs it), so it implies bitchat-source, and contradicts
  /// an explicit --sut model.
  static func systemUnderTest(_ arguments: ParsedArguments) throws -> String {
    let source = arguments.value("bitchat-src")
    let sut = arguments.value("sut") ?? (source == nil ? "model" : "bitchat-source")
    guard ["model", "bitchat-source"].contains(sut) else {
      throw UsageError("--sut: expected model or bitchat-source, got '\(sut)'")
    }
    if sut == "model", let source {
      throw UsageError(
        "--bitchat-src \(source) runs bitchat's own code; it contradicts --sut model")
    }
    return sut
  }

  /// The driver's path when some scenario needs it (nil when none does), or why there is none.
  static func prepareIfNeeded(
    _ scenarios: [Scenarios.Scenario], sut: String, bitchatSource: String?
  ) -> Result<String, BitchatSourceError>? {
    let needed = sut == "bitchat-source" || scenarios.contains { $0.app.profile == .bitchatSource }
    guard needed else { return nil }
    do {
      let result = try BitchatSourceLocation.prepare(
        bitchatSource: bitchatSource, progress: { FailClosedMain.printError($0) })
      return .success(result.executable)
    } catch let error as BitchatSourceError {
      return .failure(error)
    } catch {
      return .failure(.buildFailed("\(error)"))
    }
  }
}

extension BitchatSourceError {
  var isMissingCheckout: Bool {
    if case .noCheckout = self { return true }
    return false
  }
}
