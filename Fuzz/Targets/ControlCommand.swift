// The control port's server side (mock Tor): command framing, PROTOCOLINFO, AUTHCHALLENGE,
// AUTHENTICATE (none, password, cookie, SAFECOOKIE), GETINFO, SETCONF, SETEVENTS, SIGNAL...
// from an unauthenticated or authenticated controller, in any split.
// fuzz: -max_len=4096
import TorControl

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzControlCommand(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  var input = FuzzInput(data, size)
  let cookie = [UInt8](repeating: 0x5A, count: ControlAuthentication.cookieLength)
  let authentication = input.choose([
    ControlAuthentication.none, ControlAuthentication(password: "secret"),
    ControlAuthentication(cookie: cookie, cookieFilePath: "/run/fuzz/control_auth_cookie"),
  ])
  // A small limit too, so the too-long path is reached by short inputs.
  let maximum = input.choose([ControlCommandFramer.defaultMaximumCommandBytes, 64])
  var session = ControlSession(
    authentication: authentication, maximumCommandBytes: maximum,
    makeNonce: { [UInt8](repeating: 0x11, count: 32) })
  var context = ControlContext(socksListeners: ["127.0.0.1:9050"])
  for chunk in input.restInChunks() {
    let output = session.receive(chunk, context: &context)
    _ = session.render(.networkLiveness(up: true))
    if output.close { fuzzCheck(session.isClosed, "close asked but session open") }
    if session.isClosed { break }
  }
  // The argument helpers the session uses, on the raw text as well.
  let text = String(decoding: input.rest, as: UTF8.self)
  _ = ControlArguments.keyValues(text, omitKeys: false, omitValues: false)
  _ = ControlArguments.keyValues(text, omitKeys: true, omitValues: true)
  _ = ControlArguments.split(text, limit: 3)
  _ = ControlArguments.decodeHex(text)
  _ = ControlArguments.decodeQuoted(Array(text), from: 0)
  return 0
}
