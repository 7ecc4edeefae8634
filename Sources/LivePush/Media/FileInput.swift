import CFFmpeg

/// A ``MediaInput`` over a local file: a demuxer plus one processor (copy or transcode) for
/// the first video and the first audio stream. Created by ``MediaInputFactory``.
///
/// Timestamps stay on the file's own timeline (microseconds); ``start`` says where it begins,
/// and the push's ``OutputClock`` puts it on the output timeline. The first packets of each
/// (re)start are handed out in decode-time order across the tracks.
final class FileInput: MediaInput {
    private(set) var info: StreamInfo
    private var demuxer: FFDemuxer
    private var video: (any VideoPacketProcessor)?
    private var audio: (any AudioPacketProcessor)?
    /// The SCTE-35 cue stream, when the container has one (MPEG-TS with the CUEI registration).
    private let cueStream: DemuxedStream?
    /// The latest media timestamp read (µs): a cue arrives there (its packet's own timestamp
    /// comes from the PCR, which runs behind the pictures).
    private var lastReadTime: Int64 = 0

    /// Produced, not yet returned packets (raw timestamps); `head` is the next to return.
    private var queue: [MediaPacket] = []
    private var head = 0
    private(set) var start: MediaStart?
    private var reachedEnd = false

    /// Bounds of the look-ahead that finds each track's first packet and parameter sets.
    private static let prefetchPacketLimit = 1000
    private static let prefetchByteLimit = 4 << 20
    /// Decoded pictures (a transcoded file yields them raw) count apart: 4 MiB is three 720p
    /// pictures, short of a second of interleaving; 64 MiB is about 45 (1.5 s at 30 fps).
    private static let prefetchPictureByteLimit = 64 << 20

    init(demuxer: FFDemuxer, video: (any VideoPacketProcessor)?, audio: (any AudioPacketProcessor)?) throws(LivePushError) {
        self.demuxer = demuxer
        self.video = video
        self.audio = audio
        cueStream = demuxer.streams.first(where: \.isSCTE35)
        info = StreamInfo(video: nil, audio: nil, duration: demuxer.durationMicros)
        try prefetch(dropUnconfigured: true)
        info = StreamInfo(video: self.video?.trackInfo, audio: self.audio?.trackInfo, duration: demuxer.durationMicros)
    }

    func nextPacket() throws(LivePushError) -> MediaPacket? {
        while head == queue.count {
            queue.removeAll(keepingCapacity: true)
            head = 0
            if reachedEnd { return nil }
            try pump()
        }
        let packet = queue[head]
        queue[head].data = []  // do not keep the payload alive in the queue
        queue[head].picture = nil  // nor the picture (1.4 MB at 720p)
        head += 1
        return packet
    }

    /// A regular file (not standard input, a FIFO or a device).
    var readsWithoutWaiting: Bool { demuxer.isRegularFile }

    func suspend() throws(LivePushError) -> [MediaPacket] {
        var rest = Array(queue[head...])
        queue.removeAll(keepingCapacity: true)
        head = 0
        try video?.suspend(into: &rest)
        return rest
    }

    func setVideoBitrate(_ bitsPerSecond: Int) {
        video?.setBitrate(bitsPerSecond)
    }

    func requestKeyframe(atOrAfter time: Int64) {
        video?.requestKeyframe(atOrAfter: time)
    }

    func rewind() throws(LivePushError) {
        guard demuxer.path != FFDemuxer.standardInput else {
            throw LivePushError(.mediaReadFailed, "standard input cannot be read again to loop it")
        }
        if !demuxer.seekToStart() {
            // Some files cannot seek; opening them again always gets back to the start.
            demuxer = try FFDemuxer(path: demuxer.path)
        }
        try video?.reset()
        try audio?.reset()
        queue.removeAll(keepingCapacity: true)
        head = 0
        reachedEnd = false
        try prefetch(dropUnconfigured: false)
    }

    /// Reads ahead until every track is configured and has produced its first packet (or the
    /// file ends, or the look-ahead bound is hit), then notes where the media starts.
    private func prefetch(dropUnconfigured: Bool) throws(LivePushError) {
        var reads = 0, queuedBytes = 0, queuedPictureBytes = 0
        var sawVideo = queue.contains { $0.kind == .video }, sawAudio = queue.contains { $0.kind == .audio }
        func satisfied() -> Bool {
            let videoReady = video.map { $0.isConfigured && sawVideo } ?? true
            let audioReady = audio.map { $0.isConfigured && sawAudio } ?? true
            return videoReady && audioReady
        }
        while !reachedEnd, !satisfied(), reads < Self.prefetchPacketLimit, queuedBytes < Self.prefetchByteLimit,
              queuedPictureBytes < Self.prefetchPictureByteLimit {
            let before = queue.count
            try pump()
            for packet in queue[before...] {
                queuedBytes += packet.data.count
                if let picture = packet.picture { queuedPictureBytes += picture.width * picture.height * 3 / 2 }
                if packet.kind == .video { sawVideo = true } else if packet.kind == .audio { sawAudio = true }
            }
            reads += 1
        }
        if dropUnconfigured {
            if let v = video, !v.isConfigured {
                video = nil
                queue.removeAll { $0.kind == .video }
            }
            if let a = audio, !a.isConfigured {
                audio = nil
                queue.removeAll { $0.kind == .audio }
            }
            if video == nil && audio == nil {
                throw LivePushError(.noUsableStream, "\(demuxer.path): no codec configuration found")
            }
        }
        let firsts = [queue.first { $0.kind == .video }, queue.first { $0.kind == .audio }].compactMap { $0 }
        start = firsts.isEmpty ? nil : MediaStart(presentation: firsts.map(\.pts).min()!, decode: firsts.map(\.dts).min()!)
        // An encoder's delay (AAC primes with a frame or two) queues the first packets of its
        // track after the other track's: send the start in timestamp order (stably), or a
        // server that takes its time origin from the first packet (nginx-rtmp's recorder)
        // clamps the earlier ones onto it.
        queue = queue.enumerated().sorted { ($0.element.dts, $0.offset) < ($1.element.dts, $1.offset) }.map(\.element)
    }

    /// Feeds one demuxed packet to its processor; at the end of the file, flushes them.
    private func pump() throws(LivePushError) {
        let produced = queue.count
        guard try demuxer.read() else {
            reachedEnd = true
            try video?.finish(into: &queue)
            try generateAudio(after: produced)
            try audio?.finish(into: &queue)
            return
        }
        let index = demuxer.packet.pointee.stream_index
        if let cueStream, cueStream.index == index {
            queue.append(MediaPacket(kind: .cue, data: demuxer.packetBytes, dts: lastReadTime, pts: lastReadTime, importance: .key))
            return
        }
        if let time = demuxer.packetMicros { lastReadTime = max(lastReadTime, time) }
        if let video, video.streamIndex == index {
            try video.process(demuxer.packet, into: &queue)
            try generateAudio(after: produced)
        } else if let audio, audio.streamIndex == index {
            try audio.process(demuxer.packet, into: &queue)
        }
    }

    /// A generated audio track (video-only source in mixing mode) follows the video packets
    /// appended from `start` on, up to the end of the latest frame.
    private func generateAudio(after start: Int) throws(LivePushError) {
        guard let generated = audio as? GeneratedAudioProcessor else { return }
        var first: Int64?, end: Int64?
        for packet in queue[start...] where packet.kind == .video {
            first = min(first ?? packet.pts, packet.pts)
            end = max(end ?? .min, packet.pts + max(packet.duration, 1))
        }
        if let first, let end { try generated.follow(videoUntil: end, start: first, into: &queue) }
    }
}
