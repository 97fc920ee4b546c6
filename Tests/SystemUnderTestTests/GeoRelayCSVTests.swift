import Foundation
import Testing

@testable import SystemUnderTest

@Suite struct GeoRelayCSVTests {
  static func csv(_ count: Int, header: String = "relay url,latitude,longitude", start: Int = 0)
    -> String
  {
    ([header] + (start..<(start + count)).map { "relay\($0).example.com,1.5,2.5" })
      .joined(separator: "\n")
  }

  func validate(_ text: String, minimum: Int = 1, baseline: Set<GeoRelayCSV.Entry>? = nil)
    -> Result<[GeoRelayCSV.Entry], GeoRelayCSV.Rejection>
  {
    GeoRelayCSV.validatedEntries(from: Data(text.utf8), minimumEntries: minimum, baseline: baseline)
  }

  @Test func acceptsBothHeadersInAnyCase() throws {
    #expect(try validate(Self.csv(3)).get().count == 3)
    #expect(try validate(Self.csv(3, header: "Relay URL, LAT ,Lon")).get().count == 3)
  }

  @Test func normalisesHostsAndKeepsNon443Ports() throws {
    let entries = try validate(
      "relay url,lat,lon\nwss://A.example.com:443/,1,2\nhttps://b.example.com:8443,3,4\n"
    ).get()
    #expect(entries.map(\.host) == ["a.example.com", "b.example.com:8443"])
  }

  @Test(arguments: [
    ("relay url,lat\nrelay.example.com,1", "badHeader"),
    ("host,lat,lon\nrelay.example.com,1,2", "badHeader"),
    ("relay url,lat,lon\nrelay.example.com,1,2,3", "badRow"),
    ("relay url,lat,lon\nrelay.example.com,91,2", "badRow"),
    ("relay url,lat,lon\nrelay.example.com,1,-181", "badRow"),
    ("relay url,lat,lon\nrelay.example.com,nan,2", "badRow"),
    ("relay url,lat,lon\nws://relay.example.com,1,2", "badRow"),
    ("relay url,lat,lon\nlocalhost,1,2", "badRow"),
    ("relay url,lat,lon\nrelay.local,1,2", "badRow"),
    ("relay url,lat,lon\n10.0.0.1,1,2", "badRow"),
    ("relay url,lat,lon\nwss://relay.example.com/path,1,2", "badRow"),
    ("relay url,lat,lon\nwss://relay.example.com?q=1,1,2", "badRow"),
    ("relay url,lat,lon\nrelay,1,2", "badRow"),
    ("relay url,lat,lon\na.example.com,1,2\nb.example.com,1,2\na.example.com,1,3", "conflict"),
    ("\u{feff}relay url,lat,lon\na.example.com,1,2", "bom"),
    ("", "empty"),
  ])
  func oneBadRowRejectsTheFile(text: String, kind: String) {
    guard case .failure(let rejection) = validate(text) else {
      Issue.record("accepted: \(text)")
      return
    }
    switch (kind, rejection) {
    case ("badHeader", .badHeader), ("badRow", .badRow), ("conflict", .conflictingDuplicate),
      ("bom", .byteOrderMark), ("empty", .empty):
      break
    default: Issue.record("\(text): \(rejection), expected \(kind)")
    }
  }

  @Test func identicalDuplicatesAreFine() throws {
    #expect(
      try validate("relay url,lat,lon\na.example.com,1,2\na.example.com,1,2").get().count == 1)
  }

  @Test func sizeAndRowLimits() {
    let big = String(repeating: "x", count: 512 * 1024 + 1)
    #expect(validate(big) == .failure(.tooLarge(bytes: 512 * 1024 + 1)))
    #expect(validate(Self.csv(5_001)) == .failure(.tooManyRows(5_001)))
    #expect((try? validate(Self.csv(5_000)).get().count) == 5_000)
  }

  @Test func remoteNeedsFiftyEntriesAndHalfTheCurrentSet() throws {
    #expect(validate(Self.csv(49), minimum: 50) == .failure(.tooFewEntries(49, minimum: 50)))
    let current = Set(try validate(Self.csv(100)).get())
    // 50 of the current 100 kept: enough; 49: not.
    #expect((try? validate(Self.csv(100, start: 50), minimum: 50, baseline: current).get()) != nil)
    #expect(
      validate(Self.csv(100, start: 51), minimum: 50, baseline: current)
        == .failure(.tooLittleRetained(kept: 49, required: 50)))
  }
}
