// Scenario files as `failclosed exec`/`leak-audit` load them: the JSON parser (nesting,
// escapes, numbers, duplicate keys) and the scenario parser's fields, steps and expectations.
// fuzz: -max_len=16384
import Scenarios

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzScenario(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  _ = try? JSONParser.parse(bytes)
  do {
    let scenario = try ScenarioParser.parse(
      String(decoding: bytes, as: UTF8.self), file: "fuzz.json")
    _ = scenario.name
  } catch {
    fuzzCheck(!error.description.isEmpty, "an error without a message")
  }
  return 0
}
