/// Where an HLS output's segments start: pure, fed the output's packets and splices in their
/// order, it answers for each packet whether a new segment starts with it.
///
/// Like FFmpeg's hls muxer, a segment ends at the first keyframe once it is `hls_time` long
/// (a stream without video: at the first sound frame). A splice (a break's start or return,
/// a blackout, a source's passed-on cue) always starts a segment: at the first keyframe at its
/// time, within half a frame, so that the segment starts with the splice's picture. The inputs
/// start a keyframe there (the encoder is asked for one; a switch starts on one); a copied
/// source that has none there is cut at its next keyframe, and the start says how late it came
/// (``Start/lateBy``). A splice announced ahead waits; one announced twice (ahead, then at the
/// splice: the same splice_event_id) starts one segment.
///
/// A stream whose keyframes stop (a copied source with very long GOPs) is cut anyway at
/// ``maxSegmentDuration`` so that a segment held in memory stays bounded; that segment does not
/// start with a keyframe (``Start/forced``).
struct HLSSegmenter: Sendable {
    /// A segment that starts with the packet just admitted.
    struct Start: Sendable, Equatable {
        /// The packet's presentation time, µs of output time.
        var time: Int64
        /// The splices it starts at, in order.
        var splices: [HLSSplice] = []
        /// How far past its splice the keyframe came, µs, when that is more than a frame (a
        /// copied source without a keyframe at the splice); 0 otherwise.
        var lateBy: Int64 = 0
        /// No keyframe came for ``HLSSegmenter/maxSegmentDuration``: cut on another picture.
        var forced = false
    }

    let targetDuration: Int64
    let hasVideo: Bool
    /// One picture's (or, without video, one sound frame's) time, µs.
    let frameDuration: Int64
    /// Where the open segment started; nil before the first packet.
    private(set) var segmentStart: Int64?
    /// Splices announced and not reached yet, in time order.
    private(set) var pending: [HLSSplice] = []
    /// The last splices a segment started at: a second announcement of one is not a new splice.
    private var reached: [HLSSplice] = []
    private static let reachedKept = 8
    /// A keyframe this close to the target length ends the segment (timestamps in µs round).
    private static let lengthSlack: Int64 = 1_000

    init(targetDuration: Int64, hasVideo: Bool, frameDuration: Int64) {
        self.targetDuration = targetDuration
        self.hasVideo = hasVideo
        self.frameDuration = max(1_000, frameDuration)
    }

    /// A segment this long without a keyframe is cut anyway, µs.
    var maxSegmentDuration: Int64 { max(10 * targetDuration, 60_000_000) }

    /// How close to a splice its keyframe must be to count as at the splice: half a frame.
    var spliceTolerance: Int64 { frameDuration / 2 }

    /// A splice arrived (a `.cue` packet). True when it falls where the open segment started:
    /// the caller adds it to that segment (its cue came just after the keyframe).
    mutating func receive(_ splice: HLSSplice) -> Bool {
        if reached.contains(where: { $0.isSameSplice(as: splice) }) { return false }
        if let index = pending.firstIndex(where: { $0.isSameSplice(as: splice) }) {
            // The announcement at the splice places it where the pictures are.
            pending[index] = splice
            pending.sort { $0.time < $1.time }
            return false
        }
        if let start = segmentStart, abs(splice.time - start) <= spliceTolerance {
            remember([splice])
            return true
        }
        pending.append(splice)
        pending.sort { $0.time < $1.time }
        return false
    }

    /// A media packet (not a sequence header): the segment it starts, if any.
    mutating func admit(isVideo: Bool, pts: Int64, keyframe: Bool) -> Start? {
        guard let start = segmentStart else {
            segmentStart = pts
            return Start(time: pts, splices: takeDue(by: pts), lateBy: 0)
        }
        // With video, only pictures start segments; sound frames follow the pictures.
        guard isVideo || !hasVideo else { return nil }
        let startsGOP = keyframe || !hasVideo
        let spliceDue = pending.first.map { $0.time <= pts + spliceTolerance } ?? false
        if startsGOP && spliceDue {
            let splices = takeDue(by: pts)
            let late = splices.map { pts - $0.time }.max() ?? 0
            return open(Start(time: pts, splices: splices, lateBy: late > frameDuration ? late : 0))
        }
        if startsGOP && pts - start >= targetDuration - Self.lengthSlack {
            return open(Start(time: pts))
        }
        if !startsGOP && pts - start >= maxSegmentDuration {
            return open(Start(time: pts, forced: true))
        }
        return nil
    }

    /// A segment that must start with this packet, whatever the open one's length: the codec
    /// configuration changed, and CMAF carries it in a new init segment. The splices due by then
    /// start it too.
    mutating func restart(at pts: Int64) -> Start {
        open(Start(time: pts, splices: takeDue(by: pts)))
    }

    private mutating func open(_ start: Start) -> Start {
        segmentStart = start.time
        return start
    }

    /// The pending splices due by `pts`, taken.
    private mutating func takeDue(by pts: Int64) -> [HLSSplice] {
        let count = pending.prefix { $0.time <= pts + spliceTolerance }.count
        let due = Array(pending.prefix(count))
        pending.removeFirst(count)
        remember(due)
        return due
    }

    private mutating func remember(_ splices: [HLSSplice]) {
        reached.append(contentsOf: splices)
        if reached.count > Self.reachedKept { reached.removeFirst(reached.count - Self.reachedKept) }
    }
}
