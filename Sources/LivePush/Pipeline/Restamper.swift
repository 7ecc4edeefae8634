/// Puts every packet on the push's one monotonic output clock.
///
/// A source restarts at 0 on every loop; the restamper shifts each pass by the previous
/// pass's presentation span (earliest pts to the latest pts + duration, over all tracks), so
/// audio continues exactly where it ended and video follows without overlap. It also keeps
/// each track's decode timestamps non-decreasing, which FLV and every RTMP server require.
struct Restamper: Sendable {
    private var offset: Int64 = 0
    private var passStart = Int64.max
    private var passEnd = Int64.min
    private var lastVideoDTS = Int64.min
    private var lastAudioDTS = Int64.min
    private let fallbackVideoDuration: Int64
    private let fallbackAudioDuration: Int64

    init(info: StreamInfo) {
        let fps = info.video?.frameRate ?? 0
        fallbackVideoDuration = fps > 0 ? Int64(1_000_000 / fps) : 40_000
        let rate = info.audio?.sampleRate ?? 0
        fallbackAudioDuration = rate > 0 ? Int64(1024 * 1_000_000 / rate) : 23_220
    }

    mutating func stamp(_ packet: MediaPacket) -> MediaPacket {
        var out = packet
        out.dts += offset
        out.pts += offset
        let last = packet.kind == .video ? lastVideoDTS : lastAudioDTS
        if out.dts < last {
            out.pts += last - out.dts
            out.dts = last
        }
        if packet.kind == .video { lastVideoDTS = out.dts } else { lastAudioDTS = out.dts }
        let duration = packet.duration > 0 ? packet.duration
            : (packet.kind == .video ? fallbackVideoDuration : fallbackAudioDuration)
        passStart = min(passStart, out.pts)
        passEnd = max(passEnd, out.pts + duration)
        return out
    }

    /// The source was rewound: its next pass starts where this one's presentation ended.
    mutating func beginNextPass() {
        guard passEnd > passStart else { return }
        offset += passEnd - passStart
        passStart = .max
        passEnd = .min
    }

    /// Output presentation time at which the current pass ends (so far).
    var end: Int64 { passEnd }
}
