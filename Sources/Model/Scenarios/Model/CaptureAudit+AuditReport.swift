import Audit

extension CaptureAudit {
  /// Converts the Audit module's report to the judge's view, on the scenario's virtual time
  /// axis: `virtual = (epochSeconds - runStart) * timeScale`, where `runStart` is the Unix time
  /// (seconds) at which the scenario's virtual clock read 0. Flows become packet counts per
  /// time bucket of `bucket` virtual seconds, by class: "tor" (allowed), "control",
  /// "link-control", "inbound" and the leak classes. With an event clock, a packet's time is
  /// what the clock read when it was sent (`skip`'s moves), so a packet and an app event at the
  /// same instant still agree.
  public init(
    _ report: AuditReport, runStart: Double, timeScale: Double, skip: ClockSkip? = nil,
    bucket: Double = 1
  ) {
    func virtual(_ epoch: Double) -> Double {
      max(0, skip.map { $0.virtualTime(at: epoch) } ?? (epoch - runStart) * timeScale)
    }
    let leaks = report.leaks.map { leak in
      ScenarioLeak(
        leakClass: leak.leakClass, destination: leak.destination, transport: leak.protocol,
        names: leak.names, firstTime: virtual(leak.firstTime), lastTime: virtual(leak.lastTime),
        packets: leak.packets, bytes: leak.bytes, reason: leak.reason, direction: leak.direction,
        evidence: leak.evidence, sample: leak.sample)
    }
    var counts: [String: [Int: Int]] = [:]
    for flow in report.flows {
      let trafficClass = CaptureAudit.trafficClass(flow.disposition)
      let first = Int(virtual(flow.firstTime) / bucket)
      let last = max(first, Int(virtual(flow.lastTime) / bucket))
      // Spread the flow's packets evenly over its buckets, bounded so one long flow stays cheap.
      let spanned = min(last - first + 1, 10_000)
      for i in 0..<spanned {
        let share = flow.packets / spanned + (i < flow.packets % spanned ? 1 : 0)
        if share > 0 { counts[trafficClass, default: [:]][first + i, default: 0] += share }
      }
    }
    let traffic = counts.keys.sorted().flatMap { trafficClass in
      counts[trafficClass]!.keys.sorted().map { index in
        TrafficSample(
          time: Double(index) * bucket, trafficClass: trafficClass,
          packets: counts[trafficClass]![index]!)
      }
    }
    let torFlows = report.flows.filter { $0.disposition == "allowed" }.map { flow in
      TorFlow(
        source: flow.source, sourcePort: Int(flow.sourcePort), destination: flow.destination,
        destinationPort: Int(flow.destinationPort), packets: flow.packets)
    }
    self.init(
      verdict: report.verdict, inconclusiveReasons: report.reasons.map(\.description),
      leaks: leaks, traffic: traffic, torFlows: torFlows)
  }

  /// "allowed" -> "tor", "link-control:arp" -> "link-control", "leak:dns" and
  /// "leak-reply:dns" -> "dns"; others as they are.
  static func trafficClass(_ disposition: String) -> String {
    if disposition == "allowed" { return "tor" }
    if disposition.hasPrefix("link-control") { return "link-control" }
    if let colon = disposition.firstIndex(of: ":"), disposition.hasPrefix("leak") {
      return String(disposition[disposition.index(after: colon)...])
    }
    return disposition
  }
}

extension CaptureStats {
  /// pcap_stats and the start synchronisation, from the Audit module's report.
  public init(_ report: AuditReport, pcapPath: String? = nil) {
    let dropped = report.capture.map { Int($0.dropped + $0.interfaceDropped) } ?? 0
    self.init(
      packets: report.statistics.packets, dropped: dropped,
      positiveControlSeen: !report.reasons.contains {
        $0.kind == .positiveControlMissing || $0.kind == .captureStartedLate
      },
      pcapPath: pcapPath)
  }
}
