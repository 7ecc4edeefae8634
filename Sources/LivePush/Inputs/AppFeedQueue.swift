import DequeModule

/// Something an app hands in with a timestamp (µs).
protocol AppFed {
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
final class AppFeedQueue<Video: AppFed, Audio: AppFed>: @unchecked Sendable {
    enum Next { case video(Video), audio(Audio), end }

    let hasVideo: Bool
    let hasAudio: Bool
    private let timestamps: FrameInput.Timestamps
    private let maxVideo: Int
    private let maxAudioCost: Int
    private let audioCost: (Audio) -> Int
    private let lock = ConditionLock()
    // Guarded by `lock`.
    private var video: Deque<Video> = []
    private var audio: Deque<Audio> = []
    private var queuedAudioCost = 0
    private var finished = false
    private var firstArrival: Int64?

    init(hasVideo: Bool, hasAudio: Bool, timestamps: FrameInput.Timestamps, maxVideo: Int, maxAudioCost: Int,
         audioCost: @escaping (Audio) -> Int) {
        self.hasVideo = hasVideo
        self.hasAudio = hasAudio
        self.timestamps = timestamps
        self.maxVideo = max(1, maxVideo)
        self.maxAudioCost = max(1, maxAudioCost)
        self.audioCost = audioCost
    }

    // MARK: The app's side

    func send(video item: Video) throws(LivePushError) {
        guard hasVideo else { throw LivePushError(.invalidState, "this input has no video track") }
        var item = item
        let queued = lock.withLock {
            while video.count >= maxVideo && !finished { lock.wait() }
            guard !finished else { return false }
            if timestamps == .onArrival { item.timestamp = arrivalTime() }
            video.append(item)
            lock.broadcast()
            return true
        }
        guard queued else { throw LivePushError(.invalidState, "the input has finished") }
    }

    func send(audio item: Audio) throws(LivePushError) {
        guard hasAudio else { throw LivePushError(.invalidState, "this input has no audio track") }
        var item = item
        let cost = audioCost(item)
        let queued = lock.withLock {
            while queuedAudioCost >= maxAudioCost && !finished { lock.wait() }
            guard !finished else { return false }
            if timestamps == .onArrival { item.timestamp = arrivalTime() }
            audio.append(item)
            queuedAudioCost += cost
            lock.broadcast()
            return true
        }
        guard queued else { throw LivePushError(.invalidState, "the input has finished") }
    }

    /// The end of the input: what is queued is still taken, then `.end`.
    func finish() {
        lock.withLock {
            finished = true
            lock.broadcast()
        }
    }

    /// Called with the lock held.
    private func arrivalTime() -> Int64 {
        let now = monotonicMicroseconds()
        let first = firstArrival ?? now
        firstArrival = first
        return now - first
    }

    // MARK: The producer's side

    /// The queued item with the earliest timestamp, once every track has one (or has ended).
    func take() -> Next {
        lock.withLock {
            while !finished && ((hasVideo && video.isEmpty) || (hasAudio && audio.isEmpty)) { lock.wait() }
            defer { lock.broadcast() }  // an app waiting for room
            if let v = video.first, audio.first.map({ v.timestamp <= $0.timestamp }) ?? true {
                return .video(video.removeFirst())
            }
            guard let a = audio.popFirst() else { return .end }
            queuedAudioCost -= audioCost(a)
            return .audio(a)
        }
    }
}
