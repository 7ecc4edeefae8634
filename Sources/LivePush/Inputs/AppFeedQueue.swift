import DequeModule
import Synchronization

/// Something an app hands in with a timestamp (µs).
protocol AppFed: Sendable {
    var timestamp: Int64 { get set }
}

extension VideoFrame: AppFed {}
extension AudioFrame: AppFed {}

/// The bounded hand-over between an app's threads (`send`) and the producer thread (`take`)
/// for the inputs an app feeds (``FrameInput``, ``PacketInput``): one queue per track, taken
/// in timestamp order across the tracks once each track has something (or has ended).
///
/// Each track holds at most its limit (a count, or the sum of `audioCost`, e.g. samples):
/// `send` waits while its track is full, so memory stays bounded and a slow push slows the app
/// rather than dropping. With ``FrameInput/Timestamps/onArrival`` the time of `send` replaces
/// the item's timestamp, counted from the first item of either track.
///
/// The queues are in a `Mutex`; a side that must wait sleeps on a ``ProgressSignal`` the other
/// side wakes after its change: `taken` for the apps' threads waiting for room, `queued` for
/// the producer waiting for items. A send or a take that need not wait costs one lock and one
/// atomic load (the wake, with nobody waiting).
final class AppFeedQueue<Video: AppFed, Audio: AppFed>: Sendable {
    enum Next { case video(Video), audio(Audio), end }

    let hasVideo: Bool
    let hasAudio: Bool
    private let timestamps: FrameInput.Timestamps
    private let maxVideo: Int
    private let maxAudioCost: Int
    private let audioCost: @Sendable (Audio) -> Int
    /// Where ``FrameInput/Timestamps/onArrival`` reads the time of a `send`.
    private let clock: any MonotonicClock

    private struct State {
        var video: Deque<Video> = []
        var audio: Deque<Audio> = []
        var queuedAudioCost = 0
        var finished = false
        var firstArrival: Int64?

        /// The time of a `send` with ``FrameInput/Timestamps/onArrival``: from the first item of either track.
        mutating func arrivalTime(now: Int64) -> Int64 {
            let first = firstArrival ?? now
            firstArrival = first
            return now - first
        }
    }
    private let state = Mutex(State())
    /// Woken when the producer took an item, or the input finished: an app waiting for room.
    private let taken = ProgressSignal()
    /// Woken when an app queued an item, or the input finished: the producer waiting for one.
    private let queued = ProgressSignal()

    init(hasVideo: Bool, hasAudio: Bool, timestamps: FrameInput.Timestamps, maxVideo: Int, maxAudioCost: Int,
         audioCost: @escaping @Sendable (Audio) -> Int, clock: any MonotonicClock = SystemMonotonicClock()) {
        self.clock = clock
        self.hasVideo = hasVideo
        self.hasAudio = hasAudio
        self.timestamps = timestamps
        self.maxVideo = max(1, maxVideo)
        self.maxAudioCost = max(1, maxAudioCost)
        self.audioCost = audioCost
    }

    // MARK: The app's side

    private enum Offer { case queued, full, finished }

    func send(video item: Video) throws(LivePushError) {
        guard hasVideo else { throw LivePushError(.invalidState, "this input has no video track") }
        let maxVideo = maxVideo
        let stampsArrival = timestamps == .onArrival
        try offer(isFull: { $0.video.count >= maxVideo }) { state in
            var item = item
            if stampsArrival { item.timestamp = state.arrivalTime(now: clock.now().microseconds) }
            state.video.append(item)
        }
    }

    func send(audio item: Audio) throws(LivePushError) {
        guard hasAudio else { throw LivePushError(.invalidState, "this input has no audio track") }
        let cost = audioCost(item)
        let maxAudioCost = maxAudioCost
        let stampsArrival = timestamps == .onArrival
        try offer(isFull: { $0.queuedAudioCost >= maxAudioCost }) { state in
            var item = item
            if stampsArrival { item.timestamp = state.arrivalTime(now: clock.now().microseconds) }
            state.audio.append(item)
            state.queuedAudioCost += cost
        }
    }

    /// Queues with `append` once its track is not full (`isFull`), waiting for the producer
    /// to take while it is; throws once the input has finished.
    private func offer(isFull: (borrowing State) -> Bool, append: (inout State) -> Void) throws(LivePushError) {
        while true {
            let outcome = state.withLock { state -> Offer in
                guard !state.finished else { return .finished }
                guard !isFull(state) else { return .full }
                append(&state)
                return .queued
            }
            switch outcome {
            case .queued:
                queued.wake()
                return
            case .finished:
                throw LivePushError(.invalidState, "the input has finished")
            case .full:
                taken.wait { state.withLock { $0.finished || !isFull($0) } }
            }
        }
    }

    /// The end of the input: what is queued is still taken, then `.end`.
    func finish() {
        state.withLock { $0.finished = true }
        queued.wake()
        taken.wake()
    }

    // MARK: The producer's side

    /// The queued item with the earliest timestamp, once every track has one (or has ended).
    func take() -> Next {
        while true {
            let next = state.withLock { state -> Next? in
                let waiting = (hasVideo && state.video.isEmpty) || (hasAudio && state.audio.isEmpty)
                guard state.finished || !waiting else { return nil }
                if let v = state.video.first, state.audio.first.map({ v.timestamp <= $0.timestamp }) ?? true {
                    return .video(state.video.removeFirst())
                }
                guard let a = state.audio.popFirst() else { return .end }
                state.queuedAudioCost -= audioCost(a)
                return .audio(a)
            }
            if let next {
                taken.wake()  // an app waiting for room
                return next
            }
            queued.wait {
                state.withLock { $0.finished || !((hasVideo && $0.video.isEmpty) || (hasAudio && $0.audio.isEmpty)) }
            }
        }
    }
}
