/// Measurements that do not show censorship, by OONI's own rules (the backend's accuracy 0,
/// the specs' known client bugs): `convert` refuses them with these reasons; `--force`
/// converts anyway and writes the reasons into the file.
public enum NotCensorship {
  /// Why `measurement` is not evidence of censorship; empty when it is usable.
  public static func reasons(_ m: OONIMeasurement) -> [String] {
    var reasons: [String] = []
    switch m.keys {
    case .tor(let keys):
      if keys.shape == .list {
        reasons.append(
          "its targets are a list (tor 0.0.1 of 2020-01-10/12): OONI's backend scores "
            + "list-shaped targets with accuracy 0 (fastpath score_tor)")
      }
      let ntor = keys.targets.filter { t in
        t.failure.map { OONIFailure($0) == .ntorAuthMismatch } ?? false
      }
      if !ntor.isEmpty {
        reasons.append(
          "\(ntor.count) \(ntor.first!.protocolName) target(s) fail with \"ntor AUTH mismatch\", "
            + "a client bug of 2022 (ts-023 \"Ntor AUTH mismatch\"; ooni/probe#1986)")
      }
    case .bootstrap(let keys):
      if keys.logs == nil, keys.success == nil, (keys.progress ?? 0) == 0,
        m.testName == "vanilla_tor"
      {
        let ran = m.runtime.map { " ran \(formatRuntime($0)) and" } ?? ""
        reasons.append(
          "a probe bug: the probe\(ran) kept no tor log (tor_log null, success null, "
            + "tor_progress 0); OONI's backend gives it accuracy 0 (fastpath score_vanilla_tor)")
      }
      if m.testName == "torsf", m.softwareName?.hasPrefix("ooniprobe-android") == true,
        m.softwareVersion == "3.8.3"
      {
        reasons.append(
          "torsf from ooniprobe-android 3.8.3: OONI's backend marks these inaccurate "
            + "(ooni/backend d5a06f5)")
      }
      if m.testName == "torsf", keys.stop == nil, keys.failure != nil {
        var text =
          "torsf \(m.testVersion) failed (\(keys.failure!)) without tor logs or progress: where "
          + "tor stopped was not recorded, and a torsf failure alone is weak evidence "
          + "(ooni/probe#2063, #2794)"
        if (m.reportID ?? "").isEmpty {
          text += "; never submitted (empty report_id): a developer run"
        }
        reasons.append(text)
      }
    case .other:
      break
    }
    return reasons
  }

  static func formatRuntime(_ seconds: Double) -> String {
    seconds < 1 ? "\(Int((seconds * 1000).rounded())) ms" : "\(Int(seconds.rounded())) s"
  }
}
