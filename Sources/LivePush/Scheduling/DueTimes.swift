/// When each of a set of keys is due next, earliest first: a binary min-heap that knows where
/// each key sits, so that a key is moved (sooner or later) or removed in place. A ``SendLoop``
/// keeps one for its connections (the next server read, a blocked write's retry) and sleeps
/// until the earliest, instead of visiting every connection at a fixed sweep.
///
/// Each key is in the heap once: rescheduling moves it, so nothing stale piles up and no stale
/// entry ever wakes the loop for nothing (a heap with lazy deletion would keep a connection's
/// old due time, and at every turn of a sending connection that is an entry to skip later).
/// Pure: no clock, no locks; the caller passes the times in.
struct DueTimes<Key: Hashable> {
    private var heap: [(due: Int64, key: Key)] = []
    private var positions: [Key: Int] = [:]

    init() {}

    var count: Int { heap.count }
    var isEmpty: Bool { heap.isEmpty }
    /// The earliest due time, nil when no key is scheduled.
    var earliest: Int64? { heap.first?.due }

    /// When `key` is due, nil when it is not scheduled.
    func due(of key: Key) -> Int64? {
        positions[key].map { heap[$0].due }
    }

    /// Makes `key` due at `due`, whether it was scheduled or not.
    mutating func schedule(_ key: Key, at due: Int64) {
        guard let index = positions[key] else {
            heap.append((due, key))
            positions[key] = heap.count - 1
            siftUp(heap.count - 1)
            return
        }
        let old = heap[index].due
        heap[index].due = due
        if due < old { siftUp(index) } else if due > old { siftDown(index) }
    }

    /// Unschedules `key`; returns when it was due.
    @discardableResult
    mutating func remove(_ key: Key) -> Int64? {
        guard let index = positions.removeValue(forKey: key) else { return nil }
        let due = heap[index].due
        let last = heap.removeLast()
        guard index < heap.count else { return due }
        heap[index] = last
        positions[last.key] = index
        if last.due < due { siftUp(index) } else { siftDown(index) }
        return due
    }

    /// Takes every key due at `time` or before, earliest first, onto `keys`; they are no longer
    /// scheduled.
    mutating func takeDue(through time: Int64, into keys: inout [Key]) {
        while let first = heap.first, first.due <= time {
            keys.append(first.key)
            remove(first.key)
        }
    }

    private mutating func siftUp(_ start: Int) {
        var index = start
        while index > 0 {
            let parent = (index - 1) / 2
            guard heap[index].due < heap[parent].due else { break }
            swapAt(index, parent)
            index = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var index = start
        while true {
            let left = 2 * index + 1
            guard left < heap.count else { return }
            let right = left + 1
            let child = right < heap.count && heap[right].due < heap[left].due ? right : left
            guard heap[child].due < heap[index].due else { return }
            swapAt(index, child)
            index = child
        }
    }

    private mutating func swapAt(_ a: Int, _ b: Int) {
        heap.swapAt(a, b)
        positions[heap[a].key] = a
        positions[heap[b].key] = b
    }
}
