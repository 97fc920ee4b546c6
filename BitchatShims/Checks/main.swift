// bitchat-source-checks: the shims and arti.h checked against what bitchat relies on, in the
// generated package (where the shims are built). Each check prints one JSON line
// {"check": NAME, "ok": BOOL, "detail": TEXT}; the exit status is 1 if any failed. Run by
// the project's BitchatSourceTests.
import Foundation

signal(SIGPIPE, SIG_IGN)
var failures = 0
for check in ArtiContractChecks.all + DebianTorArtiChecks.all + CombineChecks.all
  + NetworkChecks.all + URLSessionChecks.all
  + TLSChecks.all
{
  let started = Date()
  let detail: String?
  do {
    detail = try check.body()
  } catch {
    detail = "threw \(error)"
  }
  if detail != nil { failures += 1 }
  let seconds = String(format: "%.2f", Date().timeIntervalSince(started))
  print(
    "{\"check\": \"\(check.name)\", \"ok\": \(detail == nil), \"seconds\": \(seconds), "
      + "\"detail\": \"\((detail ?? "").replacingOccurrences(of: "\"", with: "'"))\"}")
  fflush(stdout)
}
exit(failures == 0 ? 0 : 1)
