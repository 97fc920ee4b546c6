// The relay directory CSV (bitchat's geo-relay list, fetched from outside): size, BOM and
// UTF-8 checks, rows, coordinates, host validation, the retained-entries rule.
// fuzz: -max_len=16384
import Foundation
@testable import SystemUnderTest

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRelayCSV(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  var input = FuzzInput(data, size)
  let minimum = Int(input.byte() % 4)
  let baseline: Set<GeoRelayCSV.Entry>? =
    input.byte() & 1 == 1 ? [GeoRelayCSV.Entry(host: "relay.example", lat: 1, lon: 2)] : nil
  let body = Data(input.rest)
  var policy = GeoRelayCSV.Policy()
  policy.minimumRemoteEntries = 1
  switch GeoRelayCSV.validatedEntries(
    from: body, policy: policy, minimumEntries: minimum, baseline: baseline)
  {
  case .success(let entries):
    fuzzCheck(entries.count >= minimum, "fewer entries than the minimum")
    for entry in entries {
      fuzzCheck(entry.lat.isFinite && entry.lon.isFinite, "a coordinate that is not finite")
    }
  case .failure(let rejection):
    _ = rejection.description
  }
  for line in String(decoding: input.rest, as: UTF8.self).split(separator: "\n").prefix(16) {
    _ = GeoRelayCSV.validatedDirectoryAddress(String(line))
  }
  return 0
}
