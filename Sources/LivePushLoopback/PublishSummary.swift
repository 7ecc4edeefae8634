import LivePushWire

/// What the receiver saw during one publish.
public struct PublishSummary: Sendable {
    /// Sequence number of the publish within the receiver, starting at 1.
    public var publishID: Int
    /// The RTMP application name.
    public var app: String
    /// Stream name without any `?query` part.
    public var stream: String
    /// The publisher's address.
    public var remote: String
    /// Coded video frames (AVC / enhanced-RTMP packet types 1 and 3; sequence headers and
    /// end-of-sequence are not frames).
    public var videoFrames: Int
    /// Video frames flagged as keyframes.
    public var videoKeyframes: Int
    /// Whether the first coded video frame was a keyframe (nil without video).
    public var firstVideoFrameIsKeyframe: Bool?
    /// Sequence headers (AVC or AAC configuration) received, audio and video.
    public var sequenceHeaders: Int
    /// Coded audio frames (AAC raw frames; every non-empty message for other formats).
    public var audioFrames: Int
    /// Data messages (type 18 / 15), e.g. `@setDataFrame onMetaData`.
    public var dataMessages: Int
    /// Payload bytes of audio, video and data messages.
    public var bytes: Int
    /// Smallest and largest audio/video timestamp (ms); nil without media.
    public var firstTimestampMs: Int?
    /// The last media timestamp received, milliseconds.
    public var lastTimestampMs: Int?
    /// Path of the FLV recording, if a record directory was configured.
    public var recordingPath: String?
    /// Properties of the last `onMetaData` received: those with a plain value, cut to a small cap
    /// (`PeerValueCaps`: 64 properties, 4 KiB); an `onMetaData` over 64 KiB is not read.
    public var metadata: [AMF0Property]
    /// True when the timestamps of each track never went backwards.
    public var monotonic: Bool
    /// The video codec's FourCC: `avc1` for legacy AVC, else the Enhanced RTMP header's
    /// (`hvc1`, `av01`, `vp09`); nil without video.
    public var videoFourCC: String?
    /// The `fourCcList` the client's connect command announced (Enhanced RTMP); nil when it
    /// announced none (a legacy client). At most 16 entries of at most 8 bytes are kept.
    public var announcedFourCcList: [String]?
    /// Entries of the `fourCcList` and properties of `onMetaData` that were dropped to keep
    /// them within their caps (0 for a well-behaved publisher).
    public var droppedPeerValues: Int
    /// Why the publish ended: "deleteStream", "FCUnpublish", "closeStream", "disconnect", "stop".
    public var endReason: String

    /// What the summary holds in memory, roughly: its strings and lists (without the fixed fields,
    /// which every summary has). The receiver keeps summaries within a budget of these bytes.
    var estimatedBytes: Int {
        let strings = app.utf8.count + stream.utf8.count + remote.utf8.count + endReason.utf8.count
            + (recordingPath?.utf8.count ?? 0) + (videoFourCC?.utf8.count ?? 0)
        let list = announcedFourCcList?.reduce(0) { $0 + 16 + $1.utf8.count } ?? 0
        let properties = metadata.reduce(0) { total, property in
            total + 48 + property.key.utf8.count + (property.value.stringValue?.utf8.count ?? 0)
        }
        return 256 + strings + list + properties
    }

    /// `lastTimestampMs - firstTimestampMs`, 0 without media.
    public var durationMs: Int {
        guard let first = firstTimestampMs, let last = lastTimestampMs else { return 0 }
        return last - first
    }
}
