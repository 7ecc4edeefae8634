extension TSMuxer {
    /// The program a muxer writes: its tracks and their codec configurations.
    public struct Configuration: Sendable {
        /// Nil: no video track.
        public var video: VideoCodec?
        /// The AVCDecoderConfigurationRecord (avcC) or HEVCDecoderConfigurationRecord (hvcC),
        /// as an FLV sequence header or an MP4 sample entry holds it. Empty when the access
        /// units carry their own parameter sets (they are then not repeated by the muxer).
        public var videoConfiguration: [UInt8]
        /// Nil: no audio track.
        public var audio: AACConfiguration?
        /// Announce a SCTE-35 PID (and the "CUEI" registration) in the PMT. Without it,
        /// `writeSection` writes nothing: a receiver would not look for the cues anyway.
        public var scte35: Bool

        public init(video: VideoCodec? = nil, videoConfiguration: [UInt8] = [], audio: AACConfiguration? = nil,
                    scte35: Bool = false) {
            self.video = video
            self.videoConfiguration = videoConfiguration
            self.audio = audio
            self.scte35 = scte35
        }
    }
}
