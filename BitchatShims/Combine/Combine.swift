// The subset of Apple's Combine that bitchat's Tor layer uses, for Linux. Semantics follow
// Apple's documentation where bitchat depends on them: a @Published property's publisher
// sends the current value on subscription and each new value in willSet (before the stored
// value changes); CurrentValueSubject sends its current value to each new subscriber;
// receive(on: DispatchQueue) delivers asynchronously on that queue; a subscription lives as
// long as its AnyCancellable; NotificationCenter.publisher(for:) sends each posted
// notification. Demand and back-pressure are not modelled (bitchat only uses sink).
import Foundation

/// Something that sends values to its subscribers (Apple: Combine.Publisher). Subscribing
/// returns the cancellable that keeps the subscription alive.
public protocol Publisher<Output, Failure> {
  associatedtype Output
  associatedtype Failure: Error
  func subscribe(receiveValue: @escaping (Output) -> Void) -> AnyCancellable
}

/// Cancels a subscription when cancelled or released (Apple: AnyCancellable).
public final class AnyCancellable: Hashable, Cancellable {
  private var cancelAction: (() -> Void)?
  private let lock = NSLock()

  public init(_ cancel: @escaping () -> Void) { cancelAction = cancel }
  public init<C: Cancellable>(_ canceller: C) { cancelAction = { canceller.cancel() } }

  public func cancel() {
    let action: (() -> Void)? = lock.withLock {
      defer { cancelAction = nil }
      return cancelAction
    }
    action?()
  }

  deinit { cancel() }

  public func store(in set: inout Set<AnyCancellable>) { set.insert(self) }
  public func store<C: RangeReplaceableCollection>(in collection: inout C)
  where C.Element == AnyCancellable { collection.append(self) }

  public static func == (lhs: AnyCancellable, rhs: AnyCancellable) -> Bool { lhs === rhs }
  public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

public protocol Cancellable { func cancel() }

/// The list of live subscribers of one source, thread-safe.
final class SubscriberList<Output>: @unchecked Sendable {
  private let lock = NSLock()
  private var next = 0
  private var handlers: [Int: (Output) -> Void] = [:]

  func add(_ handler: @escaping (Output) -> Void) -> AnyCancellable {
    let id: Int = lock.withLock {
      next += 1
      handlers[next] = handler
      return next
    }
    return AnyCancellable { [weak self] in
      guard let self else { return }
      self.lock.withLock { _ = self.handlers.removeValue(forKey: id) }
    }
  }

  func send(_ value: Output) {
    let current = lock.withLock { handlers.sorted { $0.key < $1.key }.map(\.value) }
    for handler in current { handler(value) }
  }
}

/// A type-erased publisher (Apple: AnyPublisher).
public struct AnyPublisher<Output, Failure: Error>: Publisher {
  private let subscribeBody: (@escaping (Output) -> Void) -> AnyCancellable

  public init<P: Publisher>(_ publisher: P) where P.Output == Output, P.Failure == Failure {
    subscribeBody = { publisher.subscribe(receiveValue: $0) }
  }

  init(subscribe: @escaping (@escaping (Output) -> Void) -> AnyCancellable) {
    subscribeBody = subscribe
  }

  public func subscribe(receiveValue: @escaping (Output) -> Void) -> AnyCancellable {
    subscribeBody(receiveValue)
  }
}

/// Finishes at once without sending anything (Apple: Empty).
public struct Empty<Output, Failure: Error>: Publisher {
  public init(completeImmediately: Bool = true) {}
  public init(completeImmediately: Bool = true, outputType: Output.Type, failureType: Failure.Type)
  {}
  public func subscribe(receiveValue: @escaping (Output) -> Void) -> AnyCancellable {
    AnyCancellable {}
  }
}

/// Sends one value to each subscriber (Apple: Just).
public struct Just<Output>: Publisher {
  public typealias Failure = Never
  public let output: Output
  public init(_ output: Output) { self.output = output }
  public func subscribe(receiveValue: @escaping (Output) -> Void) -> AnyCancellable {
    receiveValue(output)
    return AnyCancellable {}
  }
}

/// Sends values to current subscribers only (Apple: PassthroughSubject).
public final class PassthroughSubject<Output, Failure: Error>: Publisher {
  private let subscribers = SubscriberList<Output>()
  public init() {}
  public func send(_ value: Output) { subscribers.send(value) }
  public func subscribe(receiveValue: @escaping (Output) -> Void) -> AnyCancellable {
    subscribers.add(receiveValue)
  }
}

/// Holds a value and sends it to each new subscriber, then every change
/// (Apple: CurrentValueSubject).
public final class CurrentValueSubject<Output, Failure: Error>: Publisher {
  private let subscribers = SubscriberList<Output>()
  private let lock = NSLock()
  private var current: Output

  public init(_ value: Output) { current = value }

  public var value: Output {
    get { lock.withLock { current } }
    set { send(newValue) }
  }

  public func send(_ value: Output) {
    lock.withLock { current = value }
    subscribers.send(value)
  }

  public func subscribe(receiveValue: @escaping (Output) -> Void) -> AnyCancellable {
    let cancellable = subscribers.add(receiveValue)
    receiveValue(value)
    return cancellable
  }
}

extension Publisher {
  public func eraseToAnyPublisher() -> AnyPublisher<Output, Failure> { AnyPublisher(self) }

  /// Apple: sink(receiveValue:) is available when Failure is Never.
  public func sink(receiveValue: @escaping (Output) -> Void) -> AnyCancellable {
    subscribe(receiveValue: receiveValue)
  }

  public func sink(
    receiveCompletion: @escaping (Subscribers.Completion<Failure>) -> Void,
    receiveValue: @escaping (Output) -> Void
  ) -> AnyCancellable {
    subscribe(receiveValue: receiveValue)
  }

  /// Delivers each value asynchronously on `queue` (Apple: receive(on:) with a DispatchQueue
  /// scheduler never delivers synchronously, not even on the queue it is already on).
  public func receive(on queue: DispatchQueue) -> AnyPublisher<Output, Failure> {
    AnyPublisher { downstream in
      self.subscribe { value in
        nonisolated(unsafe) let value = value
        queue.async { downstream(value) }
      }
    }
  }

  public func receive(on runLoop: RunLoop) -> AnyPublisher<Output, Failure> {
    AnyPublisher { downstream in
      self.subscribe { value in
        nonisolated(unsafe) let value = value
        runLoop.perform { downstream(value) }
      }
    }
  }

  public func map<T>(_ transform: @escaping (Output) -> T) -> AnyPublisher<T, Failure> {
    AnyPublisher { downstream in self.subscribe { downstream(transform($0)) } }
  }

  public func filter(_ isIncluded: @escaping (Output) -> Bool) -> AnyPublisher<Output, Failure> {
    AnyPublisher { downstream in self.subscribe { if isIncluded($0) { downstream($0) } } }
  }

  public func compactMap<T>(_ transform: @escaping (Output) -> T?) -> AnyPublisher<T, Failure> {
    AnyPublisher { downstream in
      self.subscribe { if let value = transform($0) { downstream(value) } }
    }
  }

  /// Skips the first `count` values of each subscription (Apple: dropFirst).
  public func dropFirst(_ count: Int = 1) -> AnyPublisher<Output, Failure> {
    AnyPublisher { downstream in
      let seen = Counter()
      return self.subscribe { value in
        if seen.increment() > count { downstream(value) }
      }
    }
  }

  public func removeDuplicates(by predicate: @escaping (Output, Output) -> Bool)
    -> AnyPublisher<Output, Failure>
  {
    AnyPublisher { downstream in
      let last = Box<Output?>(nil)
      return self.subscribe { value in
        let previous = last.exchange(value)
        if let previous, predicate(previous, value) { return }
        downstream(value)
      }
    }
  }
}

extension Publisher where Output: Equatable {
  public func removeDuplicates() -> AnyPublisher<Output, Failure> { removeDuplicates(by: ==) }
}

public enum Subscribers {
  public enum Completion<Failure: Error> {
    case finished
    case failure(Failure)
  }
}

final class Counter: @unchecked Sendable {
  private let lock = NSLock()
  private var value = 0
  func increment() -> Int {
    lock.withLock {
      value += 1
      return value
    }
  }
}

final class Box<Value>: @unchecked Sendable {
  private let lock = NSLock()
  private var value: Value
  init(_ value: Value) { self.value = value }
  func exchange(_ newValue: Value) -> Value {
    lock.withLock {
      let old = value
      value = newValue
      return old
    }
  }
}

/// A property that publishes its changes (Apple: @Published): `$property` sends the current
/// value on subscription, then each new value before it is stored (willSet).
@propertyWrapper
public struct Published<Value> {
  private let storage: CurrentValueStorage<Value>

  public init(wrappedValue: Value) { storage = CurrentValueStorage(wrappedValue) }

  public var wrappedValue: Value {
    get { storage.value }
    nonmutating set { storage.set(newValue) }
  }

  public var projectedValue: Publisher {
    get { Publisher(storage: storage) }
    set {}
  }

  public struct Publisher: Combine.Publisher {
    public typealias Output = Value
    public typealias Failure = Never
    let storage: CurrentValueStorage<Value>
    public func subscribe(receiveValue: @escaping (Value) -> Void) -> AnyCancellable {
      storage.subscribe(receiveValue)
    }
  }
}

final class CurrentValueStorage<Value>: @unchecked Sendable {
  private let lock = NSLock()
  private var current: Value
  private let subscribers = SubscriberList<Value>()
  init(_ value: Value) { current = value }
  var value: Value { lock.withLock { current } }
  func set(_ newValue: Value) {
    // willSet semantics: subscribers see the new value while the property still reads old.
    subscribers.send(newValue)
    lock.withLock { current = newValue }
  }
  func subscribe(_ handler: @escaping (Value) -> Void) -> AnyCancellable {
    let cancellable = subscribers.add(handler)
    handler(value)
    return cancellable
  }
}

/// Apple: ObservableObject. objectWillChange is a publisher that this subset never fires
/// (SwiftUI is not here to observe it).
public protocol ObservableObject: AnyObject {
  associatedtype ObjectWillChangePublisher: Combine.Publisher = ObservableObjectPublisher
  where ObjectWillChangePublisher.Failure == Never
  var objectWillChange: ObjectWillChangePublisher { get }
}

public final class ObservableObjectPublisher: Publisher {
  public typealias Output = Void
  public typealias Failure = Never
  private let subscribers = SubscriberList<Void>()
  public init() {}
  public func send() { subscribers.send(()) }
  public func subscribe(receiveValue: @escaping (Output) -> Void) -> AnyCancellable {
    subscribers.add(receiveValue)
  }
}

extension ObservableObject where ObjectWillChangePublisher == ObservableObjectPublisher {
  public var objectWillChange: ObservableObjectPublisher { ObservableObjectPublisher() }
}

extension NotificationCenter {
  /// Apple: NotificationCenter.Publisher, one value per posted notification.
  public struct Publisher: Combine.Publisher {
    public typealias Output = Notification
    public typealias Failure = Never
    public let center: NotificationCenter
    public let name: Notification.Name
    public let object: AnyObject?

    public func subscribe(receiveValue: @escaping (Notification) -> Void) -> AnyCancellable {
      nonisolated(unsafe) let handler = receiveValue
      let token = center.addObserver(forName: name, object: object, queue: nil) { handler($0) }
      nonisolated(unsafe) let observer = token
      let center = self.center
      return AnyCancellable { center.removeObserver(observer) }
    }
  }

  public func publisher(for name: Notification.Name, object: AnyObject? = nil) -> Publisher {
    Publisher(center: self, name: name, object: object)
  }
}
