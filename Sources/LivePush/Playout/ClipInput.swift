/// One playout entry as an input: a file from its `in` point to its `out` point (seconds).
///
/// - **Encode mode** (the channel's format): the file is decoded from the keyframe before `in`,
///   frames before `in` are dropped before the encoder, and nothing at or after `out` is sent:
///   the entry lasts (out − in) to the frame. A clip without audio gets silence (mixing mode).
/// - **Copy mode**: packets are sent as they are, so cuts fall on keyframes: the entry starts
///   at the first keyframe at or after `in` (audio from there) and ends before the first
///   keyframe at or after `out` (audio up to there). Each entry is within one GOP of its length.
///
/// A clip that ends before `out` ends there, without an error.
///
/// The producer's alone (opened ahead on the opening pool, then handed over): not `Sendable`.
final class ClipInput: MediaInput {
    private let source: any MediaInput
    private let copy: Bool
    private let inPoint: Int64
    private let outPoint: Int64
    /// Copy mode: where the video started (the keyframe at or after `in`) and where it ends.
    private var videoStart: Int64?
    private var videoEnd: Int64?
    private var done: (video: Bool, audio: Bool)
    /// Copy mode: sound past `out`, held until it is known where the pictures end (files
    /// interleave the sound up to a second ahead of the pictures).
    private var pendingAudio: [MediaPacket] = []
    /// Sound let through once the pictures' end was known.
    private var released: [MediaPacket] = []
    /// Where the pictures handed out end (the sound, without video), µs of the file.
    private var position: Int64

    init(path: String, in inSeconds: Double, out outSeconds: Double, options: MediaSourceOptions, copy: Bool,
         stages: FrameStages) throws(LivePushError) {
        inPoint = MediaTime(seconds: inSeconds).microseconds
        outPoint = MediaTime(seconds: outSeconds).microseconds
        var options = options
        options.startTime = inPoint
        if !copy {
            options.forceTranscode = true
            options.audioMixing = true
        }
        source = try MediaInputFactory.open(path: path, options: options, stages: stages)
        // A clip whose video cannot be copied yields pictures (the push's encode makes them,
        // after the clock): they carry no keyframes to cut on, so it is cut to the frame.
        self.copy = copy && source.info.video?.pictureSettings == nil
        position = inPoint
        done = (source.info.video == nil, source.info.audio == nil)
    }

    var info: StreamInfo { source.info }
    var readsWithoutWaiting: Bool { source.readsWithoutWaiting }

    /// The first packet kept says where the entry starts (what the file has before `in` is cut).
    var start: MediaStart? { nil }

    /// Seconds of the entry sent so far.
    var played: Double { MediaTime.microseconds(position - inPoint).seconds }

    func nextPacket() throws(LivePushError) -> MediaPacket? {
        while true {
            if !released.isEmpty {
                let packet = released.removeFirst()
                advance(past: packet)
                return packet
            }
            if done.video && done.audio { return nil }
            guard let packet = try source.nextPacket() else {
                // The file ended: the pictures end where they are.
                guard !pendingAudio.isEmpty else { return nil }
                picturesEnd(at: position)
                done.video = true
                continue
            }
            if let kept = cut(packet) {
                advance(past: kept)
                return kept
            }
        }
    }

    /// Copy mode: the pictures end at `time`; the sound held past `out` goes up to there.
    private func picturesEnd(at time: Int64) {
        videoEnd = time
        released = pendingAudio.filter { $0.pts + $0.duration / 2 < time }
        if released.count < pendingAudio.count { done.audio = true }
        pendingAudio = []
    }

    /// The packet if it falls inside the entry; marks a track done once it passes `out`.
    private func cut(_ packet: MediaPacket) -> MediaPacket? {
        switch packet.kind {
        case .data, .cue:
            return packet
        case .video:
            guard !done.video else { return nil }
            if copy {
                if videoStart == nil {
                    guard packet.isKeyframe, packet.pts >= inPoint - 1000 else { return nil }
                    videoStart = packet.pts
                }
                if packet.isKeyframe, packet.pts >= outPoint - 1000, packet.pts > videoStart! {
                    picturesEnd(at: packet.pts)
                    done.video = true
                    return nil
                }
                return packet
            }
            guard packet.pts < outPoint else {
                done.video = true
                return nil
            }
            return packet
        case .audio:
            guard !done.audio else { return nil }
            // Copy mode: the sound starts with the first picture and ends with the last.
            let from = copy ? videoStart ?? (source.info.video == nil ? inPoint : nil) : inPoint
            guard let from else { return nil }
            // Copy mode with video: until the keyframe that ends the pictures (not known yet: go on).
            let end = copy && source.info.video != nil ? (videoEnd ?? .max) : outPoint
            // A sound frame belongs to the entry when most of it lies inside.
            let half = packet.duration / 2
            if copy, source.info.video != nil, videoEnd == nil, packet.pts + half >= outPoint {
                pendingAudio.append(packet)
                return nil
            }
            guard packet.pts + half < end else {
                done.audio = true
                return nil
            }
            return packet.pts + half > from ? packet : nil
        }
    }

    func rewind() throws(LivePushError) {
        throw LivePushError(.invalidState, "a playout entry is not rewound; the timeline opens it again")
    }

    func suspend() throws(LivePushError) -> [MediaPacket] {
        let rest = try source.suspend().compactMap(cut)
        for packet in rest { advance(past: packet) }
        return rest
    }

    /// These were handed out but not sent (a skip cut them off): ``played`` ends before them.
    func didNotSend(_ packets: [MediaPacket]) {
        let relevant = packets.filter { $0.kind == .video || source.info.video == nil }
        guard let first = relevant.map(\.pts).min() else { return }
        position = min(position, first)
    }

    private func advance(past packet: MediaPacket) {
        if packet.kind == .video || source.info.video == nil {
            position = max(position, packet.pts + packet.duration)
        }
    }

    func setVideoBitrate(_ bitsPerSecond: Int) {
        source.setVideoBitrate(bitsPerSecond)
    }

    func requestKeyframe(atOrAfter time: Int64) {
        source.requestKeyframe(atOrAfter: time)
    }
}
