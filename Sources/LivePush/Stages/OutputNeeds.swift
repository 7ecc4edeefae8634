/// What an output's transport takes, declared by its kind; the graph after the clock provides
/// it (``GraphPlan``): an encode of the output's own where the push's tracks do not fit, the
/// push's tracks as they are (the copy) where they do. The output sends what it is given.
struct OutputNeeds: Sendable, Equatable {
    /// The sound's codec.
    enum Audio: Sendable, Equatable {
        /// The push's AAC as it is (RTMP, SRT).
        case aac
        /// Opus, encoded once for every output that needs it (``OpusStage``).
        case opus
    }

    var audio: Audio
    /// Its pictures must be H.264 that a Constrained Baseline decoder takes.
    var constrainedBaselineH264: Bool
    /// The push's start waits for its first connect to settle (``OutputSetStateMachine``). An
    /// RTMP or SRT output that joins late catches up from its queue; a WebRTC peer cannot: what
    /// is sent before the far end has its SRTP keys is lost, and its ICE and DTLS take a second
    /// (more on a busy machine), the first second of every WHIP push otherwise.
    var holdsTheStart: Bool
    /// What the output is (what a refusal names).
    var kind: OutputKind
    /// It carries several video variants (``OutputKind/carriesLadder``).
    var carriesLadder: Bool { kind.carriesLadder }

    init(audio: Audio, constrainedBaselineH264: Bool, holdsTheStart: Bool = false, kind: OutputKind = .rtmp) {
        self.audio = audio
        self.constrainedBaselineH264 = constrainedBaselineH264
        self.holdsTheStart = holdsTheStart
        self.kind = kind
    }

    /// A WHIP output (WebRTC) carries no AAC, and H.264's Constrained Baseline is the one video
    /// profile every WebRTC endpoint must decode (RFC 7742): aiortc and many SFUs answer nothing
    /// else. RTMP (Enhanced RTMP), SRT and HLS carry the push's codecs as they are; RTMP
    /// carries Opus instead of AAC when the push asks for it (`rtmpAudio`, E-RTMP v2).
    init(kind: OutputKind, rtmpAudio: AudioCodec = .aac) {
        let isWHIP = kind == .whip
        let isRTMP = kind == .rtmp || kind == .rtmps
        self.init(audio: isWHIP || (isRTMP && rtmpAudio == .opus) ? .opus : .aac, constrainedBaselineH264: isWHIP,
                  holdsTheStart: isWHIP, kind: kind)
    }
}
