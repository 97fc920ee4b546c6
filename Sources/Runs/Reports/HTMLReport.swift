import Audit
import Scenarios

/// index.html: one self-contained page (inline CSS, JS and SVG, no network) a reviewer opens
/// in a browser. Tables are written here; the per-scenario timelines (bootstrap progress,
/// actions, app events, packets by class) are drawn by the inline script from the embedded
/// report.json. The script marks `<body data-rendered="ok">` once every timeline is drawn, or
/// `data-rendered="error: ..."` on an exception, so a headless browser can check it.
public enum HTMLReport {
  public static func render(_ report: RunReport) -> String {
    var html = """
      <!DOCTYPE html>
      <html lang="en">
      <head>
      <meta charset="utf-8">
      <meta name="viewport" content="width=device-width, initial-scale=1">
      <title>failclosed: \(TerminalFormat.label(report.verdict))</title>
      <style>\(style)</style>
      <script>window.addEventListener("error", function (e) { document.body.setAttribute("data-rendered", "error: " + e.message); });</script>
      </head>
      <body data-rendered="pending" class="show-all">

      """
    html += header(report)
    html += "<main>\n"
    for (i, r) in report.results.enumerated() {
      html += section(r, index: i)
    }
    if !report.loadErrors.isEmpty {
      html += "<section class=\"scenario v-inconclusive\"><h2>Malformed scenario files</h2><ul>\n"
      for e in report.loadErrors { html += "<li><code>\(xmlEscaped(e.description))</code></li>\n" }
      html += "</ul></section>\n"
    }
    html += "</main>\n"
    html += "<script type=\"application/json\" id=\"report-data\">"
    html += JSONReport.make(report).serialized()
    html += "</script>\n<script>\(script)</script>\n</body>\n</html>\n"
    return html
  }

  static func header(_ report: RunReport) -> String {
    let versions = report.versions.sorted { $0.key < $1.key }
      .map { "\(xmlEscaped($0.key)) \(xmlEscaped($0.value))" }.joined(separator: " · ")
    var rows = ""
    for (i, r) in report.results.enumerated() {
      rows +=
        "<tr class=\"v-\(r.verdict.rawValue)\"><td>\(i + 1)</td>"
        + "<td><a href=\"#s-\(xmlEscaped(r.scenario.name))\">\(xmlEscaped(r.scenario.name))</a>"
        + "\(r.scenario.isCanary ? " <span class=\"tag\">canary</span>" : "")</td>"
        + "<td>\(badge(r.verdict))</td><td>\(r.judgement.leaks.count)</td>"
        + "<td>\(TerminalFormat.duration(r.outcome.wallSeconds))</td></tr>\n"
    }
    return """
      <header>
      <h1>failclosed leak audit \(badge(report.verdict))</h1>
      <p>\(xmlEscaped(report.countsSentence)). Started \(xmlEscaped(report.startedAt)). \(versions)</p>\(networkLine(report))
      <div class="legend" id="legend" aria-label="colour legend"></div>
      <p class="controls">Show: <button type="button" data-show="all">all</button> <button type="button" data-show="problems">not passing</button></p>
      <table class="overview"><thead><tr><th>#</th><th>Scenario</th><th>Verdict</th><th>Leaks</th><th>Time</th></tr></thead>
      <tbody>
      \(rows)</tbody></table>
      </header>

      """
  }

  static func networkLine(_ report: RunReport) -> String {
    guard let ready = report.networkReadySeconds else { return "" }
    return "\n<p class=\"meta\">Real-Tor lane: private network ready in "
      + "\(TerminalFormat.duration(ready)).</p>"
  }

  static func badge(_ v: ScenarioVerdict) -> String {
    "<span class=\"badge b-\(v.rawValue)\">\(TerminalFormat.label(v))</span>"
  }

  static func section(_ r: ScenarioResult, index: Int) -> String {
    let s = r.scenario
    var html =
      "<section class=\"scenario v-\(r.verdict.rawValue)\" id=\"s-\(xmlEscaped(s.name))\">\n"
      + "<h2>\(badge(r.verdict)) \(xmlEscaped(s.name))</h2>\n"
      + "<p class=\"title\">\(xmlEscaped(s.title))</p>\n"
      + "<p class=\"proves\">Proves: \(xmlEscaped(s.proves))</p>\n"
      + "<p class=\"meta\">\(s.lane.rawValue) lane · profile \(s.app.profile.rawValue) · Tor "
      + "\(xmlEscaped(s.tor.summary)) · \(formatSeconds(s.duration)) "
      + "\(s.lane == .realTor ? "real" : "virtual") · "
      + "\(TerminalFormat.duration(r.outcome.wallSeconds)) real · capture "
      + "\(r.outcome.capture.packets) packets, \(r.outcome.capture.dropped) dropped"
      + (s.weakness.map { " · weakness \($0)" } ?? "")
      + (s.gap.map { " · gap: \(xmlEscaped($0))" } ?? "") + "</p>\n<ul class=\"reasons\">"
    for reason in r.judgement.reasons { html += "<li>\(xmlEscaped(reason))</li>" }
    html += "</ul>\n<div class=\"timeline\" id=\"timeline-\(index)\"></div>\n"
    html +=
      "<table><thead><tr><th>Expectation</th><th>Status</th><th>Why</th></tr></thead><tbody>\n"
    for e in r.judgement.expectations {
      html +=
        "<tr class=\"e-\(e.status.rawValue)\"><td>\(xmlEscaped(e.expectation.sentence))</td>"
        + "<td>\(e.status.rawValue)</td><td>\(xmlEscaped(e.reason))</td></tr>\n"
    }
    html += "</tbody></table>\n"
    let flows =
      r.judgement.leaks.map { ("leak", $0) } + r.judgement.exposure.map { ("exposure", $0) }
    if !flows.isEmpty {
      html +=
        "<table class=\"leaks\"><thead><tr><th>Kind</th><th>Class</th><th>Destination</th>"
        + "<th>Names</th><th>First</th><th>Packets</th></tr></thead><tbody>\n"
      for (kind, l) in flows {
        html +=
          "<tr class=\"\(kind)\"><td>\(kind)</td><td>\(l.leakClass.rawValue)</td>"
          + "<td>\(xmlEscaped(l.destination)) \(xmlEscaped(l.transport))</td>"
          + "<td>\(xmlEscaped(l.names.joined(separator: ", ")))</td>"
          + "<td>\(formatSeconds((l.firstTime * 10).rounded() / 10))</td><td>\(l.packets)</td></tr>\n"
      }
      html += "</tbody></table>\n"
    }
    html += torTimeline(r)
    if let pcap = r.outcome.capture.pcapPath {
      // ReportWriter names the copy relative to the report's directory: the link opens it.
      html +=
        "<p class=\"meta\">Capture: <a class=\"pcap\" href=\"\(xmlEscaped(pcap))\">"
        + "\(xmlEscaped(pcap))</a> (open in Wireshark)</p>\n"
    }
    return html + "</section>\n"
  }

  /// tor's own timeline (bootstrap phases, problems, the controller's commands), condensed.
  static func torTimeline(_ r: ScenarioResult) -> String {
    let condensed = CondensedTorEntry.condense(r.outcome.torTimeline)
    guard !condensed.isEmpty else { return "" }
    var html =
      "<details class=\"tor-timeline\"\(r.scenario.lane == .realTor ? " open" : "")>"
      + "<summary>tor's timeline (\(r.outcome.torTimeline.count) entries"
      + (r.outcome.fetchThroughExit.map { $0 ? "; fetch through the exit OK" : "; fetch failed" }
        ?? "")
      + ")</summary>\n<table><thead><tr><th>Time</th><th>Source</th><th>Phase</th>"
      + "<th>What</th></tr></thead><tbody>\n"
    for item in condensed.prefix(400) {
      let e = item.entry
      let when =
        item.repeats > 1
        ? "\(ExpectationJudge.seconds(e.time))–\(ExpectationJudge.seconds(item.lastTime))"
        : ExpectationJudge.seconds(e.time)
      html +=
        "<tr class=\"t-\(xmlEscaped(e.phase))\"><td>\(when)</td><td>\(e.source.rawValue)</td>"
        + "<td>\(xmlEscaped(e.phase))</td><td>\(xmlEscaped(e.line))"
        + (item.repeats > 1 ? " (×\(item.repeats))" : "") + "</td></tr>\n"
    }
    if condensed.count > 400 {
      html += "<tr><td colspan=\"4\">… \(condensed.count - 400) more in report.json</td></tr>\n"
    }
    return html + "</tbody></table></details>\n"
  }

  static let style = """
    body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2733;background:#f4f6f8}
    header,main>section{background:#fff;margin:12px 16px;padding:12px 18px;border-radius:8px;box-shadow:0 1px 3px #0002}
    h1{font-size:22px;margin:4px 0}h2{font-size:17px;margin:4px 0}
    .badge{display:inline-block;padding:1px 8px;border-radius:10px;color:#fff;font-size:12px;font-weight:600;vertical-align:middle}
    .b-pass{background:#2e8540}.b-leak{background:#c62828}.b-failed{background:#e65100}.b-inconclusive{background:#6d6d6d}
    .tag{font-size:11px;background:#fff3cd;border:1px solid #e0c36b;border-radius:6px;padding:0 5px}
    table{border-collapse:collapse;margin:8px 0;width:100%}td,th{border-bottom:1px solid #e3e7eb;padding:3px 8px;text-align:left;vertical-align:top}
    .overview{width:auto}.e-failed td{background:#fdecea}.e-inconclusive td{background:#eee}tr.leak td{background:#fdecea}tr.exposure td{background:#fff8e1}
    .proves{margin:2px 0;font-style:italic}.meta{color:#5b6670;font-size:12px;margin:2px 0}.title{margin:2px 0;font-weight:600}
    .tor-timeline summary{cursor:pointer;color:#37474f}tr.t-problem td{background:#fdecea}
    .reasons{margin:4px 0 4px 18px;padding:0}.timeline svg{width:100%;height:auto;background:#fbfcfd;border:1px solid #e3e7eb;border-radius:6px}
    body.show-problems section.v-pass,body.show-problems tr.v-pass{display:none}
    button{font:inherit;padding:1px 10px;border-radius:6px;border:1px solid #b8c2cc;background:#fff;cursor:pointer}
    .legend{font-size:12px;color:#37474f;margin:6px 0;display:flex;flex-wrap:wrap;gap:4px 14px}.legend span{white-space:nowrap}
    .legend svg{vertical-align:middle;margin-right:4px}
    @media print{body{background:#fff;font-size:11px}.controls{display:none}header,main>section{box-shadow:none;margin:4px 0;padding:4px 0;break-inside:avoid-page}
    body.show-problems section.v-pass,body.show-problems tr.v-pass{display:revert}details.tor-timeline>table{display:table}
    a{color:inherit}.timeline svg{border-color:#999}*{-webkit-print-color-adjust:exact;print-color-adjust:exact}}
    """

  static let script = """
    (function () {
      "use strict";
      var data = JSON.parse(document.getElementById("report-data").textContent);
      var NS = "http://www.w3.org/2000/svg";
      var colors = {"tor": "#2e8540", "link-control": "#9e9e9e", "dns": "#d7263d", "clear-on-tor-endpoint": "#ff6f00", "tcp": "#f46036",
        "udp": "#c2185b", "icmp": "#8e24aa", "ipv6": "#3949ab", "multicast": "#b8860b",
        "other-protocol": "#6d4c41", "control": "#00897b", "inbound": "#90a4ae"};
      function el(name, attrs, parent) {
        var e = document.createElementNS(NS, name);
        for (var k in attrs) { e.setAttribute(k, attrs[k]); }
        if (parent) { parent.appendChild(e); }
        return e;
      }
      function tip(e, text) { el("title", {}, e).textContent = text; return e; }
      var LEAK = "#c62828", EXPOSURE = "#f9a825", CRASH = "#212121", CENSOR = "#795548";
      var TORMANAGER = "#1565c0", TOROWN = "#ef6c00";
      // Labels are placed in rows so that two at the same instant never overlap.
      function labeller(svg, y0, rowHeight, rows) {
        var ends = [];
        for (var r = 0; r < rows; r++) { ends.push(-1e9); }
        return function (xPos, text, fill) {
          var width = 5.6 * text.length + 4, row = 0;
          while (row < rows - 1 && ends[row] > xPos) { row++; }
          if (ends[row] > xPos) { return null; }
          ends[row] = xPos + width;
          var t = el("text", {x: xPos, y: y0 + row * rowHeight, "font-size": 9, fill: fill, "class": "label"}, svg);
          t.textContent = text;
          return t;
        };
      }
      function fmt(t) { return (Math.round(t * 10) / 10) + " s"; }
      function eventColor(ev) {
        if (ev.name === "tor-crashed") { return CRASH; }
        if (ev.name === "censor-changed") { return CENSOR; }
        if (/^Tor/.test(ev.name)) { return "#1565c0"; }
        if (ev.name === "request-sent") { return ev.fields.transport === "direct" ? "#c62828" : "#2e8540"; }
        if (ev.name === "request-queued") { return "#ef6c00"; }
        if (ev.name === "request-failed" || ev.name === "relay-rejected") { return "#6a1b9a"; }
        return "#78909c";
      }
      function fieldsText(f) {
        var parts = [];
        for (var k in f) { parts.push(k + "=" + f[k]); }
        return parts.join(" ");
      }
      function legend(host) {
        if (!host) { return; }
        function item(draw, text) {
          var span = document.createElement("span");
          var svg = el("svg", {width: 22, height: 12, viewBox: "0 0 22 12"}, span);
          draw(svg);
          span.appendChild(document.createTextNode(text));
          host.appendChild(span);
        }
        function line(colour, dash) { return function (svg) { el("line", {x1: 1, x2: 21, y1: 6, y2: 6, stroke: colour, "stroke-width": 2, "stroke-dasharray": dash || ""}, svg); }; }
        function box(colour) { return function (svg) { el("rect", {x: 3, y: 2, width: 16, height: 8, fill: colour}, svg); }; }
        function dot(colour) { return function (svg) { el("circle", {cx: 11, cy: 6, r: 4, fill: colour}, svg); }; }
        item(line(TORMANAGER), "bootstrap as the app saw it (%)");
        item(line(TOROWN, "4 2"), "tor's own bootstrap (%)");
        item(box(LEAK), "tor problem / leak");
        item(box(EXPOSURE), "exposure by the user's choice (not a leak)");
        item(line(CRASH, "3 2"), "Tor crash");
        item(line(CENSOR, "1 2"), "censor change");
        item(function (svg) { el("path", {d: "M6,2 L16,2 L11,11 Z", fill: "#455a64"}, svg); }, "action");
        item(dot("#1565c0"), "Tor notification");
        item(dot("#2e8540"), "request via Tor");
        item(dot("#c62828"), "request direct");
        item(dot("#ef6c00"), "queued");
        item(dot("#6a1b9a"), "failed / rejected");
        item(dot("#78909c"), "other event");
        Object.keys(colors).forEach(function (c) { item(box(colors[c]), c + " packets"); });
      }
      function draw(s, host) {
        var W = 1000, left = 100, right = 16, top = 8, lane = 44, lanes = 4, boot = 72;
        var H = top + boot + (lanes - 1) * lane + 26;
        // The bootstrap lane is taller, with a % axis: a 14% stall must not look like 0.
        function laneTop(i) { return i === 0 ? top : top + boot + (i - 1) * lane; }
        var dur = s.duration > 0 ? s.duration : 1;
        function x(t) { return left + (W - left - right) * Math.min(Math.max(t, 0), dur) / dur; }
        var svg = el("svg", {viewBox: "0 0 " + W + " " + H, role: "img",
          "aria-label": "timeline of " + s.name}, host);
        var names = ["Bootstrap", "Actions", "App events", "Packets"];
        for (var i = 0; i < lanes; i++) {
          var y0 = laneTop(i), h0 = (i === 0 ? boot : lane);
          el("rect", {x: left, y: y0, width: W - left - right, height: h0 - 4,
            fill: i % 2 ? "#f3f6f9" : "#eef3f7"}, svg);
          el("text", {x: 8, y: y0 + (i === 0 ? 14 : h0 / 2 + 2), "font-size": 12, fill: "#37474f"}, svg).textContent = names[i];
        }
        var step = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200].filter(function (v) { return dur / v <= 12; })[0] || 14400;
        for (var t = 0; t <= dur + 1e-9; t += step) {
          el("line", {x1: x(t), x2: x(t), y1: top, y2: laneTop(lanes), stroke: "#cfd8dc", "stroke-width": 0.5}, svg);
          el("text", {x: x(t), y: H - 8, "font-size": 11, "text-anchor": "middle", fill: "#546e7a"}, svg).textContent = t + " s";
        }
        var by = top + boot - 8, bh = boot - 16;
        [0, 25, 50, 75, 100].forEach(function (p) {
          var yp = by - bh * p / 100;
          el("line", {x1: left, x2: W - right, y1: yp, y2: yp, stroke: "#dde3e8", "stroke-width": 0.5}, svg);
          el("text", {x: left - 4, y: yp + 3, "font-size": 9, "text-anchor": "end", fill: "#78909c", "class": "axis"}, svg).textContent = p + "%";
        });
        if (s.bootstrap.length) {
          var pts = [], last = null;
          s.bootstrap.forEach(function (b) {
            var y = by - bh * b.progress / 100;
            if (last !== null) { pts.push(x(b.time) + "," + last); }
            pts.push(x(b.time) + "," + y);
            last = y;
          });
          pts.push(x(dur) + "," + last);
          el("polyline", {points: pts.join(" "), fill: "none", stroke: TORMANAGER, "stroke-width": 2}, svg);
          // After a crash the app may still read its last progress: shade the lane from the
          // crash on, so a dead Tor never looks like a healthy 100%.
          s.events.filter(function (ev) { return ev.name === "tor-crashed"; }).slice(0, 1).forEach(function (ev) {
            tip(el("rect", {x: x(ev.time), y: top, width: Math.max(1, x(dur) - x(ev.time)), height: boot - 4,
              fill: CRASH, "fill-opacity": 0.12, "class": "tor-down"}, svg), fmt(ev.time) + ": Tor crashed; the line is what the app still reads");
          });
          var final = s.bootstrap[s.bootstrap.length - 1];
          el("text", {x: W - right - 2, y: last < top + 16 ? last + 12 : last - 4, "font-size": 10, "text-anchor": "end",
            fill: TORMANAGER, "class": "label final"}, svg).textContent = final.progress + "% at the end (as the app read it)";
          s.bootstrap.forEach(function (b) {
            tip(el("circle", {cx: x(b.time), cy: by - bh * b.progress / 100, r: 3, fill: "#1565c0"}, svg),
              fmt(b.time) + ": " + b.progress + "% " + b.summary);
          });
        }
        var torSteps = (s.torTimeline || []).filter(function (e) { return e.phase === "bootstrap" && typeof e.progress === "number"; });
        if (torSteps.length) {
          var tpts = [], tlast = null;
          torSteps.forEach(function (e) {
            var y = by - bh * e.progress / 100;
            if (tlast !== null) { tpts.push(x(e.time) + "," + tlast); }
            tpts.push(x(e.time) + "," + y);
            tlast = y;
          });
          tpts.push(x(dur) + "," + tlast);
          el("polyline", {points: tpts.join(" "), fill: "none", stroke: "#ef6c00", "stroke-width": 1.5, "stroke-dasharray": "4 2"}, svg);
          torSteps.forEach(function (e) {
            tip(el("circle", {cx: x(e.time), cy: by - bh * e.progress / 100, r: 2.5, fill: "#ef6c00"}, svg),
              fmt(e.time) + ": tor " + e.progress + "% " + (e.tag || "") + " " + (e.summary || "") + " [" + e.source + "]");
          });
        }
        (s.torTimeline || []).filter(function (e) { return e.phase === "problem"; }).forEach(function (e) {
          tip(el("rect", {x: x(e.time) - 2, y: top + 1, width: 4, height: 8, fill: "#c62828"}, svg),
            fmt(e.time) + ": problem " + (e.reason || "") + (e.count ? " count " + e.count : "") + " [" + e.source + "]");
        });
        var ay = laneTop(1) + 12;
        var actionLabel = labeller(svg, ay + 10, 12, 2);
        // Actions at (nearly) the same instant share one label, so none is written over another.
        var groups = [];
        s.actions.forEach(function (a) {
          var ax = x(a.at), g = groups[groups.length - 1];
          tip(el("path", {d: "M" + (ax - 5) + "," + (ay - 8) + " L" + (ax + 5) + "," + (ay - 8) + " L" + ax + "," + (ay + 2) + " Z",
            fill: "#455a64"}, svg), fmt(a.at) + ": " + a.do);
          if (g && ax - g.x < 8) { g.names.push(a.do); } else { groups.push({x: ax, names: [a.do]}); }
        });
        groups.forEach(function (g) {
          if (!actionLabel(g.x + 3, g.names.join(" · "), "#455a64")) {
            tip(el("circle", {cx: g.x + 6, cy: ay + 8, r: 1.5, fill: "#455a64"}, svg), g.names.join(", "));
          }
        });
        // What the harness did (a Tor crash, a censor change): a line across every lane.
        var markLabel = labeller(svg, laneTop(2) + 10, 12, 2);
        s.events.filter(function (ev) { return ev.name === "tor-crashed" || ev.name === "censor-changed"; }).forEach(function (ev) {
          var crash = ev.name === "tor-crashed", mx = x(ev.time);
          tip(el("line", {x1: mx, x2: mx, y1: top, y2: laneTop(lanes) - 4, stroke: crash ? CRASH : CENSOR,
            "stroke-width": crash ? 2 : 1.5, "stroke-dasharray": crash ? "3 2" : "1 2"}, svg),
            fmt(ev.time) + ": " + ev.name + " " + fieldsText(ev.fields));
          markLabel(mx + 3, crash ? "Tor crash" : "censor: " + (ev.fields.active || ""), crash ? CRASH : CENSOR);
        });
        var ey = laneTop(2) + lane / 2 + 2;
        s.events.forEach(function (ev, k) {
          tip(el("circle", {cx: x(ev.time), cy: ey + (k % 3 - 1) * 8, r: 4, fill: eventColor(ev)}, svg),
            fmt(ev.time) + ": " + ev.name + " " + fieldsText(ev.fields));
        });
        var py = laneTop(4) - 6, ph = lane - 12;
        var peak = 1;
        s.audit.traffic.forEach(function (p) { peak = Math.max(peak, p.packets); });
        s.audit.traffic.forEach(function (p) {
          var h = Math.max(2, ph * Math.log(1 + p.packets) / Math.log(1 + peak));
          tip(el("rect", {x: x(p.time), y: py - h, width: Math.max(2, (W - left - right) / dur * 0.8), height: h,
            fill: colors[p["class"]] || "#000"}, svg), fmt(p.time) + ": " + p.packets + " " + p["class"] + " packet(s)");
        });
        function flows(list, colour, kind, row) {
          list.forEach(function (l) {
            var lx = x(l.firstTime), lw = Math.max(3, x(l.lastTime) - lx);
            tip(el("rect", {x: lx, y: laneTop(3) + 1 + row * 6, width: lw, height: 5, fill: colour, "class": kind}, svg),
              kind + ": " + l["class"] + " to " + l.destination + " " + l.names.join(", ") + " from " + fmt(l.firstTime));
          });
        }
        flows(s.leaks, LEAK, "leak", 0);
        flows(s.exposure, EXPOSURE, "exposure", 1);
      }
      legend(document.getElementById("legend"));
      data.scenarios.forEach(function (s, i) {
        var host = document.getElementById("timeline-" + i);
        if (host) { draw(s, host); }
      });
      // Self-check for headless tests: labels that overlap another label in the same timeline.
      var overlaps = 0;
      Array.prototype.forEach.call(document.querySelectorAll(".timeline svg"), function (svg) {
        var boxes = Array.prototype.map.call(svg.querySelectorAll("text.label, text.axis"), function (t) { return t.getBBox(); });
        for (var a = 0; a < boxes.length; a++) {
          for (var b = a + 1; b < boxes.length; b++) {
            var p = boxes[a], q = boxes[b];
            if (p.x < q.x + q.width && q.x < p.x + p.width && p.y < q.y + q.height && q.y < p.y + p.height) { overlaps++; }
          }
        }
      });
      document.body.setAttribute("data-label-overlaps", String(overlaps));
      Array.prototype.forEach.call(document.querySelectorAll("button[data-show]"), function (b) {
        b.addEventListener("click", function () { document.body.className = "show-" + b.getAttribute("data-show"); });
      });
      if (document.body.getAttribute("data-rendered") === "pending") {
        document.body.setAttribute("data-rendered", "ok");
      }
    })();
    """
}
