import Foundation

/// An app's exit status that says a signal ended it: 128 + SIGINT, SIGTERM or SIGKILL (the
/// default action's status through ``Spawner``, or the drivers' own handlers, which exit so
/// after stopping their tor). Other statuses are the app's own word.
struct AppEndSignal: Equatable {
  let number: Int32

  init?(status: Int32) {
    let number = status - 128
    guard [SIGINT, SIGTERM, SIGKILL].contains(number) else { return nil }
    self.number = number
  }

  var name: String {
    switch number {
    case SIGINT: return "SIGINT"
    case SIGTERM: return "SIGTERM"
    default: return "SIGKILL"
    }
  }
}
