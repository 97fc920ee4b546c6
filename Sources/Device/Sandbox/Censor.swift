import FailClosedSupport
import Foundation

/// The censor of one run: loads the rules as an nftables table in the censor namespace and,
/// when a rule poisons DNS, runs the poisoning resolver there.
extension SandboxRun {
  /// Replaces the censor's rules (an empty list lifts all censorship). Blocking.
  public func applyCensorRules(_ rules: [CensorRule]) throws {
    let script = try CensorRuleset.render(table: names.nftTable, rules: rules)
    // Flush-and-replace in one transaction: delete the old table if present, add the new one.
    let table = names.nftTable
    let exists = try censor.perform {
      try CommandRunner.capture(["nft", "list", "table", "inet", table]).status == 0
    }
    let prologue = exists ? "delete table inet \(names.nftTable)\n" : ""
    if !exists { recordNftTable(namespace: names.censor, table: names.nftTable) }
    // nft runs inside the censor namespace because it is spawned from a thread inside it.
    _ = try censor.perform { try CommandRunner.run(["nft", "-f", "-"], stdin: prologue + script) }
    let poison = rules.filter { $0.action == .poisonDNS }
    try startPoisonResolverIfNeeded(poison)
    try startCloserIfNeeded(rules)
  }
}
