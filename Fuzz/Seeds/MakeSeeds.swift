// Writes the seed corpora (Fuzz/Corpus/TARGET/NAME) from the builders, the protocol peers and
// the files the tests already use: each side of a SOCKS and a control-port conversation as the
// real state machines produce it, the audit's canary frames on every link type, a pcap of them,
// the scenario library, the CSV, bridge line and consensus texts of the tests.
// Run by `tools/fuzz --make-seeds`; a target's selector bytes come first (see its file).
import Audit
import Capture
import Foundation
import HTTPCodec
import SOCKS
import Sandbox
import SyntheticTraffic
import TorControl

let corpus = CommandLine.arguments[1]
let root = CommandLine.arguments[2]
var written = 0

@MainActor func seed(_ target: String, _ name: String, _ bytes: [UInt8]) {
  let directory = "\(corpus)/\(target)"
  try! FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
  FileManager.default.createFile(atPath: "\(directory)/\(name)", contents: Data(bytes))
  written += 1
}

@MainActor func seed(_ target: String, _ name: String, _ text: String) {
  seed(target, name, Array(text.utf8))
}

// SOCKS: the client's bytes are the server's input and the server's replies the client's.
let socksCases: [(String, SOCKSAddress, SOCKSCommand, SOCKSClientHandshake.Credentials, UInt8)] = [
  ("connect-hostname", .hostname("example.onion"), .connect, .none, 0),
  ("connect-ipv4", .ipv4([10, 0, 0, 1]), .connect, .none, 1),
  ("connect-ipv6", .ipv6([UInt8](repeating: 0, count: 15) + [1]), .connect, .none, 2),
  (
    "connect-userpass", .hostname("example.onion"), .connect,
    .usernamePassword(username: Array("user".utf8), password: Array("pass".utf8)), 0
  ),
  ("resolve", .hostname("example.com"), .resolve, .none, 0),
]
for (name, target, command, credentials, targetIndex) in socksCases {
  var client = try! SOCKSClientHandshake(
    target: target, port: 443, command: command, credentials: credentials)
  var server = SOCKSServerHandshake(policy: .tor)
  var toServer = client.greeting()
  var serverInput: [UInt8] = []
  var clientInput: [UInt8] = []
  var pending: [UInt8] = []
  for _ in 0..<8 {
    serverInput += toServer
    pending += toServer
    var replies: [UInt8] = []
    serverLoop: while true {
      let action = server.handle(pending)
      pending.removeFirst(action.consumed)
      replies += action.reply
      switch action.outcome {
      case .continueHandshake: continue
      case .finished:
        replies += [0x05, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0]
        break serverLoop
      default: break serverLoop
      }
    }
    if replies.isEmpty { break }
    clientInput += replies
    let action = client.handle(replies)
    toServer = action.send
    if client.isFinished || toServer.isEmpty { break }
  }
  let credentialIndex: UInt8 = credentials == .none ? 0 : 1
  let commandIndex = UInt8(SOCKSCommand.allCases.firstIndex(of: command)!)
  seed("SOCKSServer", name, [0, 0] + serverInput)
  seed("SOCKSServer", name + "-split", [0, 3] + serverInput)
  seed("SOCKSClient", name, [credentialIndex, targetIndex, commandIndex, 0] + clientInput)
}
seed(
  "SOCKSServer", "socks4a", [0, 0] + [4, 1, 0, 80, 0, 0, 0, 1] + Array("u\0example.com\0".utf8))
seed("SOCKSServer", "socks4", [0, 0] + [4, 1, 0, 80, 10, 0, 0, 1, 0])
seed("SOCKSServer", "http-to-socks", [0, 0] + Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
seed("SOCKSServer", "rpc-isolation", [1, 0] + [5, 1, 2, 1, 4] + Array("<torS0X>0".utf8) + [0])

// Control port: the commands controllers send, then the mock's answers as the reply seeds.
let cookie = [UInt8](repeating: 0x5A, count: ControlAuthentication.cookieLength)
let conversations: [(String, UInt8, [String])] = [
  (
    "onion-browser", 0,
    [
      "PROTOCOLINFO 1", "AUTHENTICATE", "TAKEOWNERSHIP", "SETEVENTS STATUS_CLIENT",
      "SETCONF DisableNetwork=0", "GETINFO status/bootstrap-phase", "GETINFO orconn-status",
      "GETINFO net/listeners/socks", "GETCONF DisableNetwork", "SIGNAL RELOAD", "SIGNAL NEWNYM",
      "QUIT",
    ]
  ),
  ("password", 1, ["AUTHENTICATE \"secret\"", "GETINFO version", "SETCONF DisableNetwork=1"]),
  (
    "safecookie", 2,
    [
      "PROTOCOLINFO",
      "AUTHCHALLENGE SAFECOOKIE "
        + String(repeating: "ab", count: 32),
      "AUTHENTICATE " + String(repeating: "00", count: 32), "GETINFO circuit-status",
    ]
  ),
  ("cookie", 2, ["AUTHENTICATE " + cookie.map { String(format: "%02X", $0) }.joined()]),
  ("unauthenticated", 0, ["GETINFO version", "SETCONF DisableNetwork"]),
  ("multiline", 0, ["AUTHENTICATE", "+LOADCONF\r\nSocksPort 9050\r\n.", "SETEVENTS"]),
]
for (name, authIndex, commands) in conversations {
  let text = commands.map { $0 + "\r\n" }.joined()
  seed("ControlCommand", name, [authIndex, 0, 0] + Array(text.utf8))
  seed("ControlCommand", name + "-split", [authIndex, 0, 5] + Array(text.utf8))
  let authentication = [
    ControlAuthentication.none, ControlAuthentication(password: "secret"),
    ControlAuthentication(cookie: cookie, cookieFilePath: "/run/fuzz/control_auth_cookie"),
  ][Int(authIndex)]
  var session = ControlSession(
    authentication: authentication, makeNonce: { [UInt8](repeating: 0x11, count: 32) })
  var context = ControlContext(socksListeners: ["127.0.0.1:9050"])
  var replies = session.receive(Array(text.utf8), context: &context).bytes
  replies += session.render(.bootstrap(.done)) ?? []
  seed("ControlReply", name, [0, 0] + replies)
  seed("ControlReply", name + "-controller", [1, 0] + replies)
}
let bootstrapEvents = [BootstrapPhase.starting, .done].map { ControlAsyncEvent.bootstrap($0).text }
seed(
  "ControlReply", "onion-browser-bootstrap",
  [1, 7]
    + Array(
      ("250 OK\r\n250 OK\r\n250 OK\r\n250 OK\r\n"
        + bootstrapEvents.joined()
        + "250-status/bootstrap-phase=NOTICE BOOTSTRAP PROGRESS=100 TAG=done SUMMARY=\"Done\"\r\n"
        + "250 OK\r\n250+orconn-status=\r\n$1 CONNECTED\r\n.\r\n250 OK\r\n").utf8))

// Packets: the audit tests' canaries and allowed traffic, on every link type.
let device = IPAddress("10.66.0.2")!
let device6 = IPAddress("fd66::2")!
let world = IPAddress("10.66.1.20")!
let world6 = IPAddress("fd66:1::20")!
let guardEndpoint = Endpoint("10.66.1.10:9001")!
func at(_ address: IPAddress, _ port: UInt16) -> Endpoint { Endpoint(address: address, port: port) }
let packets: [(String, [UInt8])] = [
  (
    "dns",
    FrameBuilder.udpPacket(
      from: at(device, 40000), to: at(world, 53),
      payload: FrameBuilder.dnsQuery(name: "leak.example"))
  ),
  (
    "dns-tcp",
    FrameBuilder.tcpPacket(
      from: at(device, 40001), to: at(world, 53),
      payload: FrameBuilder.be16(29) + FrameBuilder.dnsQuery(name: "tcp.example"))
  ),
  (
    "tls",
    FrameBuilder.tcpPacket(
      from: at(device, 40002), to: at(world, 443),
      payload: FrameBuilder.tlsClientHello(serverName: "leak.example"))
  ),
  (
    "http",
    FrameBuilder.tcpPacket(
      from: at(device, 40003), to: at(world, 80),
      payload: FrameBuilder.httpRequest(host: "leak.example"))
  ),
  ("tcp-syn", FrameBuilder.tcpPacket(from: at(device, 40004), to: at(world, 443), flags: 0x02)),
  ("guard", FrameBuilder.tcpPacket(from: at(device, 40005), to: guardEndpoint)),
  (
    "icmp",
    FrameBuilder.ip(
      source: device, destination: world, proto: 1, payload: FrameBuilder.icmp(type: 8))
  ),
  (
    "ipv6-udp",
    FrameBuilder.udpPacket(
      from: at(device6, 40006), to: at(world6, 53),
      payload: FrameBuilder.dnsQuery(name: "six.example", type: 28))
  ),
  (
    "sync-probe",
    FrameBuilder.udpPacket(
      from: at(device, 40007), to: Endpoint("10.66.1.1:9")!,
      payload: Array("failclosed-sync-probe".utf8))
  ),
]
for (index, linkType) in LinkType.allCases.enumerated() {
  var all: [UInt8] = [UInt8(index)]
  for (name, packet) in packets {
    let frame = FrameBuilder.frame(linkType, ip: packet)
    let framed = FrameBuilder.be16(UInt16(frame.count)) + frame
    all += framed
    if linkType == .ethernet || linkType == .linuxSLL2 || linkType == .null {
      seed("PacketDecoder", "\(linkType)-\(name)", [UInt8(index)] + framed)
    }
  }
  seed("PacketDecoder", "\(linkType)-all", all)
}
var generator = TrafficGenerator(linkType: .linuxSLL2, leakEvery: 3)
var generated: [UInt8] = [UInt8(LinkType.allCases.firstIndex(of: .linuxSLL2)!)]
for index in 0..<12 {
  generator.packet(index) { generated += FrameBuilder.be16(UInt16($0.count)) + Array($0) }
}
seed("PacketDecoder", "traffic-generator-sll2", generated)

// DNS names, TLS and HTTP payloads: the same builders, plus compression pointers.
seed("DNSName", "query", FrameBuilder.dnsQuery(name: "leak.example"))
seed("DNSName", "query-aaaa", DNSMessage.query(id: 7, name: "six.example", type: 28))
seed(
  "DNSName", "answer",
  try! DNSMessage.answer(to: FrameBuilder.dnsQuery(name: "a.example"), address: [10, 66, 1, 20]))
seed("DNSName", "tcp", FrameBuilder.be16(29) + FrameBuilder.dnsQuery(name: "tcp.example"))
let header: [UInt8] = [0x12, 0x34, 1, 0, 0, 2, 0, 0, 0, 0, 0, 0]
seed(
  "DNSName", "compressed",
  header + [1, 0x61, 7] + Array("example".utf8) + [0, 0, 1, 0, 1, 0xC0, 12, 0, 1, 0, 1])
seed("DNSName", "pointer-loop", header + [0xC0, 12, 0, 1, 0, 1])
seed("TLSServerName", "client-hello", FrameBuilder.tlsClientHello(serverName: "leak.example"))
seed("HTTPHost", "request", FrameBuilder.httpRequest(host: "leak.example", path: "/index.html"))
seed("HTTPHost", "host-port", Array("POST /x HTTP/1.1\r\nhost:  leak.example:8080 \r\n\r\n".utf8))

// HTTP and WebSocket: what the encoders send.
let key = WebSocketHandshake.key(nonce: Array(0..<16))
let upgrade = try! WebSocketHandshake.clientRequest(host: "relay.example", key: key).encoded()
seed("HTTPRequest", "websocket-upgrade", [0, 0] + upgrade)
seed(
  "HTTPRequest", "post",
  [0, 0]
    + (try! HTTPRequest(
      method: "POST", target: "/submit", host: "w.example", body: Array("hello".utf8)
    ).encoded()))
seed(
  "HTTPRequest", "chunked-pipelined",
  [0, 4]
    + Array(
      "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\n"
        .utf8))
let switching = try! WebSocketHandshake.serverResponse(
  for: HTTPRequestHead(
    method: "GET", target: "/", version: "HTTP/1.1",
    headers: [
      "Host": "relay.example", "Upgrade": "websocket", "Connection": "Upgrade",
      "Sec-WebSocket-Key": key, "Sec-WebSocket-Version": "13",
    ])
).encoded()
seed(
  "HTTPResponse", "websocket-101",
  [0, 0, 0] + switching + WebSocketFrame.text("hi").encoded(maskingKey: nil))
seed(
  "HTTPResponse", "ok",
  [0, 0, 0] + (try! HTTPResponse(status: 200, body: Array("ok".utf8)).encoded()))
seed(
  "HTTPResponse", "chunked",
  [0, 0, 3]
    + Array(
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"
        .utf8))
seed(
  "HTTPResponse", "until-close", [0, 0, 0] + Array("HTTP/1.0 200 OK\r\n\r\nbody until close".utf8))
let mask: [UInt8] = [1, 2, 3, 4]
seed(
  "WebSocket", "server-text",
  [1, 0, 0] + WebSocketFrame.text("[\"REQ\",\"sub\",{}]").encoded(maskingKey: mask))
seed(
  "WebSocket", "server-close",
  [1, 0, 0] + WebSocketFrame.close(code: 1000, reason: "bye").encoded(maskingKey: mask))
seed(
  "WebSocket", "client-messages",
  [0, 0, 3] + WebSocketFrame.ping([9]).encoded(maskingKey: nil)
    + WebSocketFrame.binary([1, 2, 3]).encoded(maskingKey: nil)
    + WebSocketFrame.pong().encoded(maskingKey: nil))
var fragment = WebSocketFrame.text("frag")
fragment.fin = false
var continuation = WebSocketFrame.text("ment")
continuation.opcode = .continuation
seed(
  "WebSocket", "client-fragmented",
  [0, 0, 0] + fragment.encoded(maskingKey: nil) + WebSocketFrame.ping().encoded(maskingKey: nil)
    + continuation.encoded(maskingKey: nil))

// pcap files: the canaries on three link types, written by the project's own PcapWriter.
for linkType in [LinkType.ethernet, .linuxSLL2, .null] {
  let path = NSTemporaryDirectory() + "/failclosed-seed-\(getpid()).pcap"
  let writer = try! PcapWriter(path: path, linkType: linkType)
  for (index, (_, packet)) in packets.enumerated() {
    writer.write(
      timestamp: 1_700_000_000_000_000_000 + Int64(index) * 1_000,
      frame: FrameBuilder.frame(linkType, ip: packet))
  }
  writer.close()
  seed("PcapFile", "canaries-\(linkType)", Array(FileManager.default.contents(atPath: path)!))
  try? FileManager.default.removeItem(atPath: path)
}

// Scenario files: the library itself.
for file in try! FileManager.default.contentsOfDirectory(atPath: "\(root)/Scenarios").sorted()
where file.hasSuffix(".json") && file != "scenario.schema.json" {
  seed("Scenario", file, Array(FileManager.default.contents(atPath: "\(root)/Scenarios/\(file)")!))
}

// Relay CSV, bridge lines, consensus: the texts the tests use.
seed(
  "RelayCSV", "three",
  [1, 0]
    + Array(
      ([
        "relay url,latitude,longitude"
      ] + (0..<3).map { "relay\($0).example.com,1.5,2.5" }).joined(separator: "\n").utf8))
seed(
  "RelayCSV", "normalised",
  [1, 1]
    + Array(
      "relay url,lat,lon\nwss://A.example.com:443/,1,2\nhttps://b.example.com:8443,3,4\n".utf8))
seed("RelayCSV", "bad-row", [1, 0] + Array("relay url,lat,lon\nrelay.example.com,91,2".utf8))
let cert = "cert=" + String(repeating: "A", count: 70)
seed(
  "BridgeLine", "obfs4",
  "Bridge obfs4 10.66.1.15:4433 0123456789ABCDEF0123456789ABCDEF01234567 \(cert) iat-mode=0")
seed("BridgeLine", "plain", "127.0.0.1:9001")
seed("BridgeLine", "ipv6", "[fd66::5]:443")
seed("BridgeLine", "two-lines", "127.0.0.1:17031\nobfs4 10.0.0.1:443 iat-mode=0")
seed(
  "Consensus", "testnet",
  """
  network-status-version 3 microdesc
  r middle1 Xl6tMEvTPqJ3dngcBNYrKgv/WD0 orNFq7vAyFoXMkpGAs+U1loJh3Q 2026-11-29 14:04:28 127.0.0.1 7021 0
  s Fast Guard Running Stable Valid
  r auth1 hxGVjAXOymotuw6CkL0fP0gMryQ ZNETBsBN5r6qqrskuuKtVGiGxzA 2026-11-29 14:04:28 10.66.1.2 9001 9030
  s Authority Exit Fast Running V2Dir Valid
  """)
seed(
  "Consensus", "bootstrap-log",
  """
  Dec 01 10:00:00.000 [notice] Bootstrapped 5% (conn): Connecting to a relay
  Dec 01 10:00:01.000 [warn] Problem bootstrapping. Stuck at 5% (conn): Connecting to a relay. (Connection refused; CONNECTREFUSED; count 1; recommendation warn; host ABC at 10.66.1.10:9001)
  Dec 01 10:00:02.000 [notice] Bootstrapped 100% (done): Done
  """)
seed("GuardTunnel", "request", GuardTunnel.encode(.init(host: "world.example", port: 443)))
print("wrote \(written) seed files under \(corpus)")
