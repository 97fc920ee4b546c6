import Combine
import Foundation

final class PublishedHolder {
  @Published var value = 1
}

/// The Combine shim against Apple's documentation for what bitchat uses.
enum CombineChecks {
  static let all: [Check] = [
    Check("Combine: @Published sends the current value on subscription, then new values in willSet")
    {
      let holder = PublishedHolder()
      var seen: [(received: Int, stored: Int)] = []
      let cancellable = holder.$value.sink { seen.append(($0, holder.value)) }
      holder.value = 2
      cancellable.cancel()
      holder.value = 3
      let pairs = seen.map { "\($0.received)/\($0.stored)" }
      // Apple: "the publisher sends the new value ... before the property's value changes".
      return pairs == ["1/1", "2/1"] ? nil : "got \(pairs)"
    },
    Check("Combine: CurrentValueSubject sends its value to each new subscriber") {
      let subject = CurrentValueSubject<Bool, Never>(true)
      var seen: [Bool] = []
      let cancellable = subject.sink { seen.append($0) }
      subject.send(false)
      _ = cancellable
      return seen == [true, false] && subject.value == false ? nil : "got \(seen)"
    },
    Check("Combine: removeDuplicates().dropFirst() skips the current value and repeats") {
      let subject = CurrentValueSubject<Bool, Never>(true)
      var seen: [Bool] = []
      let cancellable = subject.removeDuplicates().dropFirst().sink { seen.append($0) }
      subject.send(true)
      subject.send(false)
      subject.send(false)
      subject.send(true)
      _ = cancellable
      return seen == [false, true] ? nil : "got \(seen)"
    },
    Check("Combine: receive(on: queue) delivers later on that queue, never inside send") {
      let subject = PassthroughSubject<Int, Never>()
      let queue = DispatchQueue(label: "check.receive")
      let key = DispatchSpecificKey<Int>()
      queue.setSpecific(key: key, value: 7)
      let lock = NSLock()
      var onQueue: [Bool] = []
      var insideSend = false
      let cancellable = subject.receive(on: queue).sink { _ in
        lock.withLock { onQueue.append(DispatchQueue.getSpecific(key: key) == 7 && !insideSend) }
      }
      queue.sync {
        insideSend = true
        subject.send(1)
        insideSend = false
      }
      _ = waitUntil(2) { lock.withLock { onQueue.count == 1 } }
      _ = cancellable
      return lock.withLock { onQueue } == [true] ? nil : "got \(onQueue)"
    },
    Check("Combine: releasing the AnyCancellable ends the subscription; store(in:) keeps it") {
      let subject = PassthroughSubject<Int, Never>()
      var seen: [Int] = []
      var set = Set<AnyCancellable>()
      subject.sink { seen.append($0) }.store(in: &set)
      do { _ = subject.sink { seen.append($0 * 100) } }
      subject.send(1)
      set.removeAll()
      subject.send(2)
      return seen == [1] ? nil : "got \(seen)"
    },
    Check("Combine: NotificationCenter.publisher(for:) sends each posted notification") {
      let center = NotificationCenter()
      let name = Notification.Name("check")
      var count = 0
      let cancellable = center.publisher(for: name).sink { _ in count += 1 }
      center.post(name: name, object: nil)
      center.post(name: Notification.Name("other"), object: nil)
      center.post(name: name, object: nil)
      cancellable.cancel()
      center.post(name: name, object: nil)
      return count == 2 ? nil : "got \(count)"
    },
    Check("Combine: Empty sends nothing; eraseToAnyPublisher keeps the values") {
      var seen = 0
      let empty = Empty<Int, Never>().eraseToAnyPublisher().sink { _ in seen += 1 }
      let just = Just(5).eraseToAnyPublisher().sink { seen += $0 }
      _ = (empty, just)
      return seen == 5 ? nil : "got \(seen)"
    },
  ]
}
