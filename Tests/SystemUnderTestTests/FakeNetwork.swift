@testable import SystemUnderTest

/// A session whose relay sockets and fetches are driven by the test.
@AppActor final class FakeSession: NetworkSession {
  let route: Route
  var requestedURLs: [String] = []
  var connections: [FakeRelayConnection] = []
  var fetches: [FakeFetch] = []
  /// When set, new relay sockets connect at once.
  var autoConnect = true
  var invalidated = false

  init(route: Route = .tor) { self.route = route }

  func fetch(
    _ url: String, timeout: Double,
    completion: @escaping @AppActor (Result<FetchedResponse, NetworkFailure>) -> Void
  ) -> SessionTask {
    requestedURLs.append(url)
    let fetch = FakeFetch(url: url, completion: completion)
    fetches.append(fetch)
    return fetch
  }

  func webSocketTask(_ url: String) -> RelayConnection {
    requestedURLs.append(url)
    let connection = FakeRelayConnection(url: url, autoConnect: autoConnect)
    connections.append(connection)
    return connection
  }

  func invalidateAndCancel() {
    invalidated = true
    for fetch in fetches { fetch.cancel() }
    for connection in connections { connection.cancel() }
  }
}

@AppActor final class FakeFetch: SessionTask {
  let url: String
  var completion: (@AppActor (Result<FetchedResponse, NetworkFailure>) -> Void)?
  var cancelled = false
  init(
    url: String, completion: @escaping @AppActor (Result<FetchedResponse, NetworkFailure>) -> Void
  ) {
    self.url = url
    self.completion = completion
  }
  func cancel() {
    cancelled = true
    finish(.failure(.cancelled))
  }
  func finish(_ result: Result<FetchedResponse, NetworkFailure>) {
    let completion = self.completion
    self.completion = nil
    completion?(result)
  }
  func respond(_ body: String, status: Int = 200) {
    finish(.success(FetchedResponse(status: status, url: url, body: Array(body.utf8))))
  }
}

@AppActor final class FakeRelayConnection: RelayConnection {
  let url: String
  let autoConnect: Bool
  var events: (@AppActor (RelayConnectionEvent) -> Void)?
  var sent: [String] = []
  var cancelled = false

  init(url: String, autoConnect: Bool) {
    self.url = url
    self.autoConnect = autoConnect
  }

  func resume(events: @escaping @AppActor (RelayConnectionEvent) -> Void) {
    self.events = events
    if autoConnect { events(.connected) }
  }

  func send(_ text: String, completion: @escaping @AppActor (Bool) -> Void) {
    sent.append(text)
    completion(!cancelled)
  }

  func cancel() { cancelled = true }

  func fail(_ failure: NetworkFailure) { events?(.failed(failure)) }
}

/// bitchat's MockTorWaiter: awaitTorReady callbacks held until the test resolves them.
@AppActor final class TorWaiter {
  var pending: [@AppActor (Bool) -> Void] = []
  var ready = false
  var waits = 0
  func await(_ completion: @escaping @AppActor (Bool) -> Void) {
    waits += 1
    pending.append(completion)
  }
  func resolve(_ value: Bool) {
    ready = value
    let callbacks = pending
    pending = []
    for callback in callbacks { callback(value) }
  }
}
