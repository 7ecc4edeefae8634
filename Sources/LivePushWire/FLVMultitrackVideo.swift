/// Enhanced RTMP v2 multitrack video (veovera E-RTMP v2, "Multitrack"): one connection carries
/// several video tracks (a ladder), each tag naming its track.
///
/// LivePush writes track 0 as an ordinary video tag (legacy AVC, or E-RTMP v1) and every other
/// track in tags of its own, `AvMultitrackType.OneTrack` with the track's id, as FFmpeg 8's
/// FLV muxer and OBS write them: FFmpeg 8's demuxer reads these, and keeps only the first
/// configuration of a `ManyTracks` SequenceStart. A server that takes no multitrack skips
/// or refuses the other tracks' tags, so they are only sent to one that says it takes them.
public enum FLVMultitrackVideo {
    /// `VideoPacketType.Multitrack`.
    public static let packetType: UInt8 = 6
    /// `AvMultitrackType.OneTrack`, in the high nibble of the second byte.
    public static let oneTrack: UInt8 = 0x00
    /// `AvMultitrackType.ManyTracks`.
    public static let manyTracks: UInt8 = 0x10
    /// `AvMultitrackType.ManyTracksManyCodecs`.
    public static let manyTracksManyCodecs: UInt8 = 0x20

    /// `avc1`: H.264 in E-RTMP tags (a multitrack track), with a composition time like `hvc1`.
    public static let avc1: [UInt8] = Array("avc1".utf8)

    private static func head(keyframe: Bool, _ type: FLVBody.ExVideoPacketType, fourCC: [UInt8], trackID: UInt8) -> [UInt8] {
        [0x80 | (keyframe ? 0x10 : 0x20) | packetType, oneTrack | type.rawValue] + fourCC + [trackID]
    }

    /// A track's `SequenceStart`, in a tag of its own: the configuration record (avcC, hvcC,
    /// av1C or vpcC) follows.
    public static func sequenceStart(fourCC: [UInt8], trackID: UInt8, configuration: [UInt8]) -> [UInt8] {
        head(keyframe: true, .sequenceStart, fourCC: fourCC, trackID: trackID) + configuration
    }

    /// What precedes a track's coded frame: 8 bytes, and a 24-bit composition time for `avc1`
    /// and `hvc1` (10 bytes; `CodedFramesX`, without it, for an `hvc1` frame whose time is zero).
    public static func framePrefix(fourCC: [UInt8], trackID: UInt8, keyframe: Bool, compositionTimeMs: Int32) -> FLVTagPrefix {
        let timed = fourCC == avc1 || fourCC == FLVExVideoCodec.hevc.fourCCBytes
        guard timed, fourCC == avc1 || compositionTimeMs != 0 else {
            let type: FLVBody.ExVideoPacketType = timed ? .codedFramesX : .codedFrames
            return FLVTagPrefix(head(keyframe: keyframe, type, fourCC: fourCC, trackID: trackID))
        }
        let cts = UInt32(bitPattern: compositionTimeMs)
        return FLVTagPrefix(head(keyframe: keyframe, .codedFrames, fourCC: fourCC, trackID: trackID)
                            + [UInt8((cts >> 16) & 0xFF), UInt8((cts >> 8) & 0xFF), UInt8(cts & 0xFF)])
    }

    /// What a multitrack video tag body says of itself, read bounded; nil for any other tag or
    /// one too short for its header. `ManyTracks` bodies are not split here: `trackID` is the
    /// first track's.
    public struct Header: Sendable, Equatable {
        public var multitrackType: UInt8
        public var packetType: UInt8
        public var fourCC: String
        public var trackID: UInt8
        public var keyframe: Bool
        /// Where the track's data begins (after the track id, and for `ManyTracks` its size).
        public var dataOffset: Int

        public init?(_ body: some Collection<UInt8>) {
            let bytes = Array(body.prefix(11))
            guard bytes.count >= 7, bytes[0] & 0x80 != 0, bytes[0] & 0x0F == FLVMultitrackVideo.packetType else { return nil }
            multitrackType = bytes[1] & 0xF0
            packetType = bytes[1] & 0x0F
            fourCC = String(decoding: bytes[2..<6], as: UTF8.self)
            trackID = bytes[6]
            keyframe = (bytes[0] >> 4) & 0x07 == 1
            dataOffset = multitrackType == FLVMultitrackVideo.oneTrack ? 7 : 10
            guard bytes.count >= dataOffset || multitrackType == FLVMultitrackVideo.oneTrack else { return nil }
        }
    }
}
