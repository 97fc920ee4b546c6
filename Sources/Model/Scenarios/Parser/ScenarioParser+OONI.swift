/// The `ooni` block of a scenario converted from an OONI measurement: provenance only, read
/// by reports; it changes nothing in the run.
extension ScenarioParser {
  static func parseOONIProvenance(_ doc: FieldReader, lane: Lane) throws(ScenarioError)
    -> OONIProvenance?
  {
    guard let r = try doc.object("ooni") else { return nil }
    if lane != .realTor {
      throw doc.fail("ooni", "a replayed OONI measurement runs on the real-Tor lane")
    }
    try r.rejectUnknown(allowing: ["source", "measurement", "notCensorship", "notes", "note"])
    func strings(_ key: String) throws(ScenarioError) -> [String] {
      try (r.array(key, "sentences") ?? []).map { e throws(ScenarioError) in
        guard case .string(let s) = e.value, !s.isEmpty else {
          throw ScenarioError(
            file: r.file, path: e.path,
            message: "expected a sentence (a string), got \(e.value.shortDescription)")
        }
        return s
      }
    }
    _ = try r.string("note", required: false)
    return OONIProvenance(
      source: try r.string("source")!, measurement: try r.string("measurement")!,
      notCensorship: try strings("notCensorship"), notes: try strings("notes"))
  }
}
