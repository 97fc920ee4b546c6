import Scenarios
import TorControl

/// Where tor stopped (vanilla_tor, torsf) mapped to the censorship that makes Debian's tor stop
/// there in the private network (measured on the real-Tor lane, reference/private-tor-net.md):
/// relays' ports dropped -> 5% (conn); the TLS handshake dropped (packets over 100 bytes) ->
/// 10% (conn_done); nothing blocked -> 100% (done). Snowflake (torsf) is approximated by the
/// network's obfs4 bridge: every relay blocked, the bridge reachable -> 100% through it; the
/// bridge dropped too -> 2% (conn_done_pt: the local transport answers, nothing beyond it).
public enum BootstrapStopCensorship {
  public struct Plan: Sendable {
    /// Censor rules, each with where it came from.
    public var rules: [[(key: String, value: JSONValue)]]
    /// Bridges seeded into the app (torsf: the obfs4 bridge standing in for snowflake).
    public var bridges: [String]
    /// Today's phase the sandbox must stop at.
    public var phase: String
    public var progress: Int
    public var notes: [String]
  }

  /// The stops this mapping reproduces, as today's tags, per transport.
  public static let supported: [String: [String]] = [
    "vanilla": ["conn", "conn_done", "done"],
    "snowflake": ["conn_done_pt", "done"],
  ]

  public static func plan(stop: BootstrapStop, transport: String, measured: String)
    throws(OONIConversionError) -> Plan
  {
    guard let phase = stop.phase else {
      throw OONIConversionError.unsupported(
        "no phase of today's tor matches the measured stop \(stop)")
    }
    let snowflake = transport == "snowflake"
    let supportedTags = supported[snowflake ? "snowflake" : "vanilla"]!
    guard supportedTags.contains(phase.tag) else {
      throw OONIConversionError.unsupported(
        "no censorship in the sandbox is known to stop \(snowflake ? "a bridged" : "a") tor at "
          + "\(phase.progress)% (\(phase.tag)) (measured \(stop)); supported stops: "
          + supportedTags.map { t in
            "\(BootstrapPhase.named(t)!.progress)% \(t)"
          }.joined(separator: ", "))
    }
    func rule(_ fields: [(key: String, value: JSONValue)], _ why: String) -> [(
      key: String, value: JSONValue
    )] {
      fields + [("measured", .string("\(measured): \(why)"))]
    }
    var rules: [[(key: String, value: JSONValue)]] = []
    var notes: [String] = []
    if snowflake {
      notes.append(
        "snowflake is approximated by the private network's obfs4 bridge: the app is given its "
          + "bridge line, every relay is blocked so only the bridge path can work")
      rules.append(
        rule(
          [
            ("action", .string("drop")), ("to", .string("tor-relays")),
            ("protocol", .string("tcp")),
          ],
          "a snowflake client reaches Tor only through its bridge"))
      if phase.tag == "conn_done_pt" {
        rules.append(
          rule(
            [
              ("action", .string("drop")), ("to", .string("tor-bridge")),
              ("protocol", .string("tcp")),
            ],
            "the transport started, nothing reached the bridge"))
      }
    } else {
      switch phase.tag {
      case "conn":
        rules.append(
          rule(
            [
              ("action", .string("drop")), ("to", .string("tor-relays")),
              ("protocol", .string("tcp")),
            ],
            "no connection to any relay or directory server completed"))
        rules.append(
          rule(
            [
              ("action", .string("drop")), ("to", .string("tor-bridge")),
              ("protocol", .string("tcp")),
            ],
            "nor to the bridge"))
      case "conn_done":
        rules.append(
          rule(
            [
              ("action", .string("drop")), ("to", .string("tor-relays")),
              ("protocol", .string("tcp")), ("longerThan", .number(100)),
            ],
            "connected, but the TLS handshake never completed"))
      default:
        notes.append("bootstrapped to \(stop): nothing blocked")
      }
    }
    return Plan(
      rules: rules, bridges: snowflake ? ["testnet-obfs4"] : [], phase: phase.tag,
      progress: phase.progress, notes: notes)
  }
}
