// What one message to a push costs, by the inbox kind (issue 34: "measure which, and write down why").
// Run: swiftc -O -swift-version 6 Benchmarks/inbox-benchmark.swift -o /tmp/inbox-benchmark && /tmp/inbox-benchmark

import Synchronization
import Dispatch

enum Message: Sendable { case command(Int), stop }

final class LockedInbox: Sendable {
    let state = Mutex<(messages: [Message], applied: Int)>(([], 0))
    func receive(_ m: Message) { state.withLock { $0.applied += 1; if case .command(let x) = m, x < 0 { $0.messages.append(m) } } }
}

actor ActorInbox {
    var applied = 0
    func receive(_ m: Message) { applied += 1 }
}

@inline(never) func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

let n = 1_000_000
let locked = LockedInbox()
var t0 = now()
for i in 0..<n { locked.receive(.command(i)) }
var t1 = now()
print("Mutex inbox: \(Double(t1 - t0) / Double(n)) ns per message")

let inbox = ActorInbox()
let sem = DispatchSemaphore(value: 0)
t0 = now()
Task.detached {
    for i in 0..<n { await inbox.receive(.command(i)) }
    sem.signal()
}
sem.wait()
t1 = now()
print("actor inbox, awaited from a task: \(Double(t1 - t0) / Double(n)) ns per message")

// From a plain thread (how the outputs' threads and the app call): each message is a Task.
let group = DispatchGroup()
t0 = now()
for i in 0..<100_000 {
    group.enter()
    Task.detached { await inbox.receive(.command(i)); group.leave() }
}
group.wait()
t1 = now()
print("actor inbox, a Task per message from a thread: \(Double(t1 - t0) / 100_000) ns per message")
