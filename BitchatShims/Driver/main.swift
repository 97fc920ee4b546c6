import ArtiLinux
import Foundation
import FoundationNetworkingShim
import TLS
import Tor

// bitchat-source-driver --actions FILE [--state-dir DIR] [--ca FILE]
//                       [--transport apple|linux-foundation] [--tor-base TORRC]
//                       [--bootstrap-end-order as-they-happen|stopped-last|stopped-first]
// Everything bitchat keeps on disk goes under the state directory: its Application Support
// (XDG_DATA_HOME: the Arti data directory, the relay-directory cache) and UserDefaults.
// --tor-base: arti.h runs Debian's tor pinned by that base (the real-Tor lane), its logs in
// <state-dir>/tor; without it, arti.h waits for the mock Tor's SOCKS port (the mock lane).
// --bootstrap-end-order: which of two overlapping bootstraps (a restart while one is pending)
// ends first (ArtiBootstrapEndOrder; the scenario's tor.bootstrapEndOrder).

func usage(_ message: String) -> Never {
  FileHandle.standardError.write(("bitchat-source-driver: " + message + "\n").data(using: .utf8)!)
  exit(2)
}

var options: [String: String] = [:]
var arguments = Array(CommandLine.arguments.dropFirst())
while !arguments.isEmpty {
  let name = arguments.removeFirst()
  guard name.hasPrefix("--"), !arguments.isEmpty else { usage("bad argument '\(name)'") }
  options[String(name.dropFirst(2))] = arguments.removeFirst()
}
guard let actionsFile = options["actions"] else { usage("--actions FILE is required") }
// Absolute: XDG_DATA_HOME must be (the XDG spec ignores a relative one, and Foundation then
// falls back to ~/.local/share), and the lanes name it relative to a relative --report.
let stateDirectory = URL(
  fileURLWithPath: options["state-dir"] ?? NSTemporaryDirectory() + "bitchat-source-\(getpid())",
  relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath, isDirectory: true)
).standardizedFileURL.path
// Foundation may read XDG_DATA_HOME once, as the process starts, so the driver starts itself
// again with them in its environment: Application Support was ~/.local/share for every run at
// once, and runs side by side removed one another's tor directories.
let xdg = [
  "XDG_DATA_HOME": stateDirectory + "/data", "XDG_CONFIG_HOME": stateDirectory + "/config",
]
if xdg.contains(where: { getenv($0.key).map { String(cString: $0) } != $0.value }) {
  for (name, value) in xdg { setenv(name, value, 1) }
  let argv = CommandLine.arguments.map { strdup($0) } + [nil]
  execv("/proc/self/exe", argv)
  usage("cannot start itself again with XDG_DATA_HOME set: \(String(cString: strerror(errno)))")
}
try? FileManager.default.createDirectory(
  atPath: stateDirectory + "/data/bitchat", withIntermediateDirectories: true)

if let transport = options["transport"] {
  guard let chosen = BitchatTransport(rawValue: transport) else {
    usage("--transport must be apple or linux-foundation, got '\(transport)'")
  }
  BitchatTransport.current = chosen
}
if let base = options["tor-base"] {
  do {
    ArtiBackendChoice.useDebianTor(
      try DebianTorArtiConfiguration(baseTorrcPath: base, logDirectory: stateDirectory + "/tor"))
  } catch {
    usage("\(error)")
  }
}
if let order = options["bootstrap-end-order"] {
  guard let chosen = ArtiBootstrapEndOrder(rawValue: order) else {
    usage(
      "--bootstrap-end-order must be "
        + ArtiBootstrapEndOrder.allCases.map(\.rawValue).joined(separator: ", ")
        + ", got '\(order)'")
  }
  ArtiBackendChoice.orderBootstrapEnds(chosen)
}
if let ca = options["ca"] {
  guard let pem = try? String(contentsOfFile: ca, encoding: .utf8) else {
    usage("--ca \(ca): unreadable")
  }
  AppleTransportSettings.trust = .pem(pem)
}

// The scenario's preferences (UserDefaults) and the relay directory cached by an earlier run.
let defaults = UserDefaults.standard
for key in defaults.dictionaryRepresentation().keys { defaults.removeObject(forKey: key) }
if let data = FileManager.default.contents(atPath: stateDirectory + "/preferences.json"),
  let preferences = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
{
  for (key, value) in preferences { defaults.set(value, forKey: key) }
}
// Under both names bitchat has used: georelays_cache.csv until 58ccb305 (2026-07-26), then
// georelays_cache_v2.csv (the same CSV; that commit's code removes the old name).
let cache = stateDirectory + "/georelays_cache_v2.csv"
if FileManager.default.fileExists(atPath: cache) {
  for name in ["georelays_cache_v2.csv", "georelays_cache.csv"] {
    try? FileManager.default.removeItem(atPath: stateDirectory + "/data/bitchat/" + name)
    try? FileManager.default.copyItem(
      atPath: cache, toPath: stateDirectory + "/data/bitchat/" + name)
  }
}

let actions: [DriverAction]
do {
  guard let text = try? String(contentsOfFile: actionsFile, encoding: .utf8) else {
    usage("--actions \(actionsFile): unreadable")
  }
  actions = try DriverAction.parse(text, file: actionsFile)
} catch {
  usage("\(error)")
}

// Events keep the launch stdout; bitchat's own log (SecureLogger prints to stdout off
// Apple) and stderr go to a file beside the state.
EventStream.shared.takeStandardOutput(logPath: stateDirectory + "/bitchat.log")
_ = freopen(stateDirectory + "/bitchat.log", "a", stderr)

signal(SIGPIPE, SIG_IGN)
// The harness stops a run that ended on time only after its last event; a signal before that
// is an interrupted run, and the event says who sent it.
TerminationSignal.install { _ = arti_stop() }

MainThreadWatchdog.shared.start()
Task { @MainActor in
  let driver = BitchatSourceDriver()
  driver.observe()
  EventStream.shared.record(
    "state",
    [
      "component": "app", "field": "profile", "value": "bitchat-source",
      "transport": BitchatTransport.current.rawValue, "torEnforced": TorManager.shared.torEnforced,
    ])
  for action in actions {
    if let at = action.at {
      let delay = at - EventStream.shared.now
      if delay > 0 { try? await Task.sleep(nanoseconds: UInt64(delay * 1e9)) }
    }
    MainThreadWatchdog.shared.began(action.name)
    driver.perform(action)
    if action.name == "wait", let seconds = (action.fields["seconds"] as? NSNumber)?.doubleValue {
      try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
    }
  }
  EventStream.shared.record("action", ["action": "end"])
  _ = arti_stop()
  exit(0)
}
RunLoop.main.run()
