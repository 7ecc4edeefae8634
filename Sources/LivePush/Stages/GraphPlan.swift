/// Which encodes after the clock a push runs, decided once at its start (pure): from what each
/// output needs (``OutputNeeds``), what the app asked for (``PushConfig/outputVideo``) and the
/// push's tracks.
///
/// The rule for an output that needs H.264 Constrained Baseline (WHIP): it takes the push's
/// video as it is only when that video is H.264 a Constrained Baseline decoder takes and no
/// other input can go on air after it (no playout sequence, no pause image); otherwise it gets
/// a Constrained Baseline encode of its own at the source's size (at the rendition it asked
/// for, if any, made Constrained Baseline). The other outputs keep the copy. A WebRTC session
/// cannot change profile, nor take a new SPS, once negotiated, so the decision is made before
/// the offer, from the push's first input; an encode's configuration never changes whatever
/// goes on air before the clock.
///
/// A ladder (several renditions for one output, one variant each) goes only to an output that
/// carries one (``OutputKind/carriesLadder``: HLS, RTMP, WHIP); SRT refuses it here, with a sentence.
///
/// A codec preference list (``PushConfig/videoCodecPreference``, `--video-codec hevc,h264`)
/// gives each RTMP output that asked for no rendition of its own the list's codecs as
/// alternatives: the push's video when its codec is in the list, and an encode at its size for
/// each other codec. The push plans its graph before any output connects, and a connection's
/// codec is known only from its server's answer, so every alternative is encoded from the
/// start (one encode per codec, shared by the outputs) and each connection sends the one its
/// server confirmed (``RTMPTrackPlan``).
struct GraphPlan: Sendable, Equatable {
    /// Each output's own video encodes (its ladder: one for most); an output without one takes
    /// the push's video.
    var renditions: [Int: [VideoRendition]]
    /// Outputs whose sound is the one Opus encode; the others take the push's AAC.
    var opusOutputs: [Int]
    /// Outputs whose renditions are alternatives of one video in the preference list's codecs.
    var alternatives: Set<Int> = []
    /// Outputs that take the push's video as their variant 0 besides their renditions (one of
    /// the alternatives).
    var withPushVideo: Set<Int> = []

    /// - Parameters:
    ///   - inputsMayChange: another input may go on air (a playout sequence, a pause image).
    ///   - defaultBitrateKbps: the bitrate of an encode nobody asked a rendition for, at a size.
    static func make(needs: [OutputNeeds], asked: [Int: [VideoRendition]], video: VideoTrackInfo?, hasAudio: Bool,
                     inputsMayChange: Bool, preference: [VideoCodec] = [],
                     defaultBitrateKbps: (VideoSize) -> Int) throws(LivePushError) -> GraphPlan {
        for (id, ladder) in asked.sorted(by: { $0.key < $1.key }) where ladder.count > 1 && needs.indices.contains(id) {
            guard needs[id].carriesLadder else {
                throw LivePushError(.outputSettingsInvalid, "output \(id) has a ladder of \(ladder.count) renditions: \(needs[id].kind.ladderRefusal)")
            }
        }
        var renditions = asked.filter { !$0.value.isEmpty }
        for (id, need) in needs.enumerated() where need.constrainedBaselineH264 {
            if let ladder = asked[id], !ladder.isEmpty {
                // A ladder is simulcast: every layer a Constrained Baseline encode.
                renditions[id] = try ladder.map { (rendition: VideoRendition) throws(LivePushError) -> VideoRendition in
                    guard rendition.codec == .h264 else {
                        throw LivePushError(.outputSettingsInvalid,
                                            "output \(id) is WHIP, which carries H.264 Constrained Baseline, not \(rendition.codec.rawValue): ask for \(rendition.width)x\(rendition.height)@\(rendition.bitrateKbps)")
                    }
                    var baseline = rendition
                    baseline.constrainedBaseline = true
                    return baseline
                }
                if ladder.count > WebRTCPeer.maxLayers {
                    throw LivePushError(.outputSettingsInvalid, "output \(id) is WHIP, which sends at most \(WebRTCPeer.maxLayers) simulcast layers, not \(ladder.count)")
                }
            } else if let video, !(fitsAsItIs(video) && !inputsMayChange) {
                let size = VideoSize(width: video.width, height: video.height)
                renditions[id] = [VideoRendition(width: video.width, height: video.height, bitrateKbps: defaultBitrateKbps(size),
                                                 constrainedBaseline: true)]
            }
        }
        var alternatives: Set<Int> = []
        var withPushVideo: Set<Int> = []
        if preference.count > 1, let video {
            let size = VideoSize(width: video.width, height: video.height)
            for (id, need) in needs.enumerated() where (need.kind == .rtmp || need.kind == .rtmps) && renditions[id] == nil {
                renditions[id] = preference.filter { $0 != video.codec }.map {
                    VideoRendition(width: video.width, height: video.height, bitrateKbps: defaultBitrateKbps(size), codec: $0)
                }
                if preference.contains(video.codec) { withPushVideo.insert(id) }
                alternatives.insert(id)
            }
        }
        let opus = hasAudio ? needs.indices.filter { needs[$0].audio == .opus } : []
        return GraphPlan(renditions: renditions, opusOutputs: opus, alternatives: alternatives, withPushVideo: withPushVideo)
    }

    /// H.264 whose avcC says a Constrained Baseline decoder takes it.
    static func fitsAsItIs(_ video: VideoTrackInfo) -> Bool {
        video.codec == .h264 && H264ProfileLevel(avcC: video.decoderConfiguration)?.isConstrainedBaseline == true
    }
}
