import FailClosedSupport
import Foundation

extension SandboxRun {
  /// Starts (once) the censor's poisoning resolver, to which the censor's DNAT sends every DNS
  /// question from the device. Names a rule lists (and their subdomains) get the rule's
  /// address; other names get the world's usual answer, as if the question had passed.
  func startPoisonResolverIfNeeded(_ rules: [CensorRule]) throws {
    poisonRules.withLock { $0 = rules }
    guard !rules.isEmpty, poisonResolver.withLock({ $0 == nil }) else { return }
    let table = poisonRules
    let resolver = try FakeResolver(
      name: "censor.dns", namespace: censor,
      addresses: [
        SocketAddress(host: CensorRuleset.poisonResolverV4, port: 53)!,
        SocketAddress(host: CensorRuleset.poisonResolverV6, port: 53)!,
      ],
      answer: { question in
        let rules = table.withLock { $0 }
        for rule in rules where PoisonMatch.matches(question.name, rule.names) {
          guard let address = rule.poisonAddress.flatMap(SocketAddress.parseIP) else { continue }
          if (address.count == 4) == (question.type == DNSQuestion.typeA) { return address }
        }
        return WorldServices.worldAnswer(question)
      })
    poisonResolver.withLock { $0 = resolver }
    recordService("censor.dns") { resolver.stop() }
  }

  /// Questions the censor's poisoning resolver answered.
  public var poisonedQuestions: [RecordedQuestion] {
    poisonResolver.withLock { $0?.questions ?? [] }
  }
}

enum PoisonMatch {
  /// True when `name` is one of `names` or below one (every name when `names` is nil).
  static func matches(_ name: String, _ names: [String]?) -> Bool {
    guard let names else { return true }
    return names.contains { listed in
      let listed = listed.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "."))
      return name == listed || name.hasSuffix("." + listed)
    }
  }
}
