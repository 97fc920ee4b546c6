/// Renders ``CensorRule``s as one nftables table for the censor namespace. Pure: the ruleset is
/// text a test can read. Filtering happens in the forward hook on packets arriving from the
/// device's link (dev0); DNS poisoning is a DNAT of port 53 to the censor's own resolver.
enum CensorRuleset {
  /// The censor's poisoning resolver listens here, in the censor namespace.
  static let poisonResolverV4 = AddressPlan.censorDeviceSideV4
  static let poisonResolverV6 = AddressPlan.censorDeviceSideV6

  static func render(table: String, rules: [CensorRule]) throws(CensorRuleError) -> String {
    var filter: [String] = []
    var nat: [String] = []
    for (index, rule) in rules.enumerated() {
      do {
        try rule.validate()
      } catch {
        throw CensorRuleError(field: "rules[\(index)].\(error.field)", message: error.message)
      }
      if rule.action == .closeAfterConnect {
        nat += closerRedirects(rule)
      } else if rule.action == .poisonDNS {
        nat += [
          "iifname \"dev0\" meta nfproto ipv4 meta l4proto { tcp, udp } th dport 53 dnat ip to \(poisonResolverV4)",
          "iifname \"dev0\" meta nfproto ipv6 meta l4proto { tcp, udp } th dport 53 dnat ip6 to \(poisonResolverV6)",
        ]
      } else {
        filter.append(filterRule(rule))
      }
    }
    var lines = ["table inet \(table) {"]
    lines.append("  chain forward {")
    lines.append("    type filter hook forward priority filter; policy accept;")
    lines += filter.map { "    " + $0 }
    lines.append("  }")
    lines.append("  chain prerouting {")
    lines.append("    type nat hook prerouting priority dstnat; policy accept;")
    // Only the first poison rule's DNAT matters: one resolver answers for all of them.
    lines += Array(Set(nat)).sorted().map { "    " + $0 }
    lines.append("  }")
    lines.append("}")
    return lines.joined(separator: "\n") + "\n"
  }

  /// close-after-connect: the matching TCP connects go to the censor's closer instead.
  static func closerRedirects(_ rule: CensorRule) -> [String] {
    let port = rule.port.map { " tcp dport \($0)" } ?? ""
    let to4 = "dnat ip to \(poisonResolverV4):\(SandboxRun.closerPort)"
    let to6 = "dnat ip6 to [\(poisonResolverV6)]:\(SandboxRun.closerPort)"
    if let destination = rule.destination, let block = CensorRule.parseBlock(destination) {
      let v4 = block.bytes.count == 4
      return [
        "iifname \"dev0\" \(v4 ? "ip" : "ip6") daddr \(destination) meta l4proto tcp\(port) "
          + (v4 ? to4 : to6)
      ]
    }
    return [
      "iifname \"dev0\" meta nfproto ipv4 meta l4proto tcp\(port) \(to4)",
      "iifname \"dev0\" meta nfproto ipv6 meta l4proto tcp\(port) \(to6)",
    ]
  }

  static func filterRule(_ rule: CensorRule) -> String {
    var parts = ["iifname \"dev0\""]
    if let destination = rule.destination, let block = CensorRule.parseBlock(destination) {
      parts.append((block.bytes.count == 4 ? "ip daddr " : "ip6 daddr ") + destination)
    }
    let proto: CensorRule.TransportProtocol? =
      rule.action == .reset || rule.action == .resetAfterHandshake ? .tcp : rule.protocol
    switch (proto, rule.port) {
    case (.tcp, let port?): parts.append("tcp dport \(port)")
    case (.udp, let port?): parts.append("udp dport \(port)")
    case (nil, let port?): parts.append("meta l4proto { tcp, udp } th dport \(port)")
    case (.tcp, nil): parts.append("meta l4proto tcp")
    case (.udp, nil): parts.append("meta l4proto udp")
    case (.icmp, _): parts.append("meta l4proto { icmp, ipv6-icmp }")
    case (nil, nil): break
    }
    if let longerThan = rule.longerThan { parts.append("meta length > \(longerThan)") }
    if rule.action == .resetAfterHandshake { parts.append("meta length > 100") }
    switch rule.action {
    case .drop: parts.append("drop")
    case .reset: parts.append("reject with tcp reset")
    case .icmpPortUnreachable: parts.append("reject with icmpx type port-unreachable")
    case .icmpHostUnreachable: parts.append("reject with icmpx type host-unreachable")
    case .icmpAdminProhibited: parts.append("reject with icmpx type admin-prohibited")
    case .icmpNetUnreachable: parts.append("reject with icmpx type no-route")
    case .resetAfterHandshake: parts.append("reject with tcp reset")
    case .poisonDNS, .closeAfterConnect: break
    }
    return parts.joined(separator: " ")
  }
}
