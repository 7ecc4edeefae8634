import CFFmpeg
import DequeModule

/// AAC in, Opus out, for the outputs that carry Opus (``OpusStage``, WHIP): decodes raw AAC frames with libavcodec,
/// resamples them to 48 kHz (mono stays mono, anything else becomes stereo) in an interleaved
/// format libopus takes, and encodes 20 ms Opus packets (960 samples) with libopus.
///
/// Timestamps are counted, not copied: the first input packet's pts starts a segment, and the
/// N-th Opus packet of the segment has pts = dts = that pts + N × 20 ms, duration 20 ms. The
/// packet stamped T holds the encoder's input from T on, i.e. once a receiver has dropped
/// ``preSkip`` samples at the start of the stream (as Ogg and libavcodec do) the decoded
/// sample at T is the input sample at T; a receiver that drops nothing (plain RTP) hears
/// everything ``preSkip`` samples (6.5 ms) late. Nothing is subtracted from the stamps.
///
/// Small jitter in the input stamps (FLV's whole milliseconds) is ignored; an input packet
/// more than 100 ms away from where the previous one ended (a gap, or a jump back) ends the
/// segment: what is buffered is encoded (padded with silence to a whole frame) on the old
/// timeline and a new segment starts at the new packet's pts.
///
/// A new AudioSpecificConfig (an input switch to other sound) reopens the decoder only: the
/// encoder and its timeline go on (``reconfigure(audioSpecificConfig:)``).
///
/// Used on one thread at a time.
final class AudioOpusTranscoder {
    static let sampleRate = 48_000
    static let frameSamples: Int32 = 960
    static let frameMicros: Int64 = 20_000
    /// How far an input packet may be from where the previous one ended before the mapping restarts.
    static let maxJitter: Int64 = 100_000

    private(set) var track: AudioTrackInfo
    let bitrate: Int
    /// The encoder's format: 48 kHz, 1 or 2 channels.
    let format: AudioFormat
    /// The OpusHead the encoder wrote (RFC 7845: what an Ogg writer puts first, and where ``preSkip`` is read from).
    let opusHead: [UInt8]
    /// The Opus header's pre-skip, in 48 kHz samples (what an RTP/WebRTC receiver or an Ogg writer needs to know).
    let preSkip: Int

    private var decoder: FFDecoder
    private let resampler: FFResampler
    private let encoder: FFEncoder
    /// s16 or flt, interleaved: what libopus takes.
    private let sampleFormat: AVSampleFormat
    private let packet: UnsafeMutablePointer<AVPacket>
    private let frame: UnsafeMutablePointer<AVFrame>
    private let fifo: OpaquePointer
    /// Where the current segment started (µs, the input's timeline) and how many frames it has had.
    private var segment: (start: Int64, frames: Int64)?
    /// Where the last input packet ended (µs), to find gaps.
    private var expectedInput: Int64?
    /// Start times of the frames sent to the encoder whose packets have not come out yet.
    private var pending = Deque<Int64>()
    /// The last packet's pts, for the packets the encoder adds when it drains.
    private var lastPts: Int64?
    /// Samples sent to the encoder: its frames' pts (1/48000), which only libopus's own bookkeeping reads.
    private var encodedSamples: Int64 = 0
    private var finished = false

    init(track: AudioTrackInfo, bitrate: Int = 64_000) throws(LivePushError) {
        FF.quietLogging
        self.track = track
        self.bitrate = bitrate
        let format = AudioFormat(sampleRate: Self.sampleRate, channels: track.channels == 1 ? 1 : 2)
        self.format = format
        guard let codec = avcodec_find_encoder_by_name("libopus") else {
            throw LivePushError(.encoderUnavailable, "no libopus encoder in libavcodec")
        }
        guard let chosen = Self.interleavedFormat(of: codec) else {
            throw LivePushError(.encoderUnavailable, "libopus takes neither interleaved s16 nor float")
        }
        sampleFormat = chosen
        encoder = try FFEncoder(codec: codec, privateOptions: [("frame_duration", "20"), ("application", "audio")]) { ctx in
            ctx.pointee.sample_fmt = chosen
            ctx.pointee.sample_rate = Int32(format.sampleRate)
            av_channel_layout_default(&ctx.pointee.ch_layout, Int32(format.channels))
            ctx.pointee.bit_rate = Int64(bitrate)
            ctx.pointee.time_base = AVRational(num: 1, den: Int32(format.sampleRate))
        }
        guard encoder.frameSize == Int(Self.frameSamples) else {
            throw LivePushError(.encoderUnavailable, "libopus frame size is \(encoder.frameSize), not \(Self.frameSamples)")
        }
        opusHead = encoder.extradata
        // OpusHead: "OpusHead", version, channel count, pre-skip (16 bits, little-endian), ...
        guard opusHead.count >= 19, opusHead.starts(with: Array("OpusHead".utf8)) else {
            throw LivePushError(.encoderUnavailable, "libopus wrote no OpusHead")
        }
        preSkip = Int(opusHead[10]) | Int(opusHead[11]) << 8
        decoder = try Self.makeDecoder(track: track)
        resampler = try FFResampler(format: format, sampleFormat: chosen, failure: .transcodeFailed)
        guard let packet = av_packet_alloc() else { throw LivePushError(.outOfMemory, "av_packet_alloc") }
        self.packet = packet
        guard let frame = av_frame_alloc() else { throw LivePushError(.outOfMemory, "av_frame_alloc") }
        self.frame = frame
        guard let fifo = av_audio_fifo_alloc(chosen, Int32(format.channels), 4096) else {
            throw LivePushError(.outOfMemory, "audio FIFO")
        }
        self.fifo = fifo
    }

    deinit {
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
        var f: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&f)
        av_audio_fifo_free(fifo)
    }

    /// Float if libopus takes it (no rounding before the encoder), else s16.
    private static func interleavedFormat(of codec: UnsafePointer<AVCodec>) -> AVSampleFormat? {
        guard var formats = codec.pointee.sample_fmts else { return AV_SAMPLE_FMT_FLT }  // unspecified: anything
        var offered: Set<Int32> = []
        while formats.pointee != AV_SAMPLE_FMT_NONE {
            offered.insert(formats.pointee.rawValue)
            formats += 1
        }
        return [AV_SAMPLE_FMT_FLT, AV_SAMPLE_FMT_S16].first { offered.contains($0.rawValue) }
    }

    /// The AAC decoder, opened with the AudioSpecificConfig as extradata (raw frames carry no header).
    private static func makeDecoder(track: AudioTrackInfo) throws(LivePushError) -> FFDecoder {
        guard let parameters = avcodec_parameters_alloc() else { throw LivePushError(.outOfMemory, "avcodec_parameters_alloc") }
        var owned: UnsafeMutablePointer<AVCodecParameters>? = parameters
        defer { avcodec_parameters_free(&owned) }
        parameters.pointee.codec_type = AVMEDIA_TYPE_AUDIO
        parameters.pointee.codec_id = AV_CODEC_ID_AAC
        parameters.pointee.sample_rate = Int32(track.sampleRate)
        av_channel_layout_default(&parameters.pointee.ch_layout, Int32(max(1, track.channels)))
        let config = track.audioSpecificConfig
        if !config.isEmpty {
            // Zero-padded, as libavcodec reads past the end.
            guard let extradata = av_mallocz(config.count + Int(AV_INPUT_BUFFER_PADDING_SIZE))?
                .assumingMemoryBound(to: UInt8.self) else { throw LivePushError(.outOfMemory, "av_mallocz") }
            extradata.update(from: config, count: config.count)
            parameters.pointee.extradata = extradata
            parameters.pointee.extradata_size = Int32(config.count)
        }
        return try FFDecoder(parameters: parameters, timeBase: FF.microsTimeBase, threads: 1)
    }

    /// One AAC frame in; zero or more Opus packets out (20 ms each, 48 kHz, stereo or mono as the input),
    /// each a MediaPacket(kind: .audio) with data = the Opus packet, pts/dts in µs on the same timeline as the input, duration 20_000.
    func transcode(_ aac: MediaPacket) throws(LivePushError) -> [MediaPacket] {
        guard aac.kind == .audio, !aac.isSequenceHeader, !aac.data.isEmpty, !finished else { return [] }
        var out: [MediaPacket] = []
        if let expected = expectedInput, abs(aac.pts - expected) > Self.maxJitter {
            try endSegment(into: &out)
        }
        if segment == nil { segment = (aac.pts, 0) }

        try FF.load(aac, into: packet)
        try decoder.send(packet)
        var decodedMicros: Int64 = 0
        while try decoder.receive() {
            let decoded = decoder.frame.pointee
            if decoded.sample_rate > 0 {
                decodedMicros += Int64(decoded.nb_samples) * 1_000_000 / Int64(decoded.sample_rate)
            }
            try resample(decoder.frame)
        }
        let fallback = aac.duration > 0 ? aac.duration : 1024 * 1_000_000 / Int64(max(1, track.sampleRate))
        expectedInput = aac.pts + (decodedMicros > 0 ? decodedMicros : fallback)
        while av_audio_fifo_size(fifo) >= Self.frameSamples {
            try encodeFrame(into: &out)
        }
        return out
    }

    /// Sound already decoded (the push's own encode's mixed frames, ``AudioEncodeStage``) at
    /// output time `pts`: resampled and encoded as ``transcode(_:)`` does with what it decodes,
    /// on the same segments.
    func transcode(_ sound: AudioFrame, at pts: Int64) throws(LivePushError) -> [MediaPacket] {
        guard !finished else { return [] }
        var out: [MediaPacket] = []
        if let expected = expectedInput, abs(pts - expected) > Self.maxJitter {
            try endSegment(into: &out)
        }
        if segment == nil { segment = (pts, 0) }
        try resample(sound.storage.frame)
        expectedInput = pts + sound.duration
        while av_audio_fifo_size(fifo) >= Self.frameSamples {
            try encodeFrame(into: &out)
        }
        return out
    }

    /// The sound's configuration changed: what the old decoder holds is encoded on, then a
    /// decoder for `config` takes over. The Opus encoder, its segment and its stamps go on.
    func reconfigure(audioSpecificConfig config: [UInt8]) throws(LivePushError) {
        guard config != track.audioSpecificConfig, !config.isEmpty, !finished else { return }
        try decoder.send(nil)
        while try decoder.receive() { try resample(decoder.frame) }
        track.audioSpecificConfig = config
        // Bits 5 to 8: the sampling frequency index (15: an explicit rate, kept as it was).
        let index = Int(config[0] & 0x07) << 1 | Int(config.count > 1 ? config[1] >> 7 : 0)
        if index < ADTSHeader.sampleRates.count { track.sampleRate = ADTSHeader.sampleRates[index] }
        decoder = try Self.makeDecoder(track: track)
    }

    /// The end of the stream: what the decoder, the resampler and the FIFO still hold, and the
    /// encoder's tail (its look-ahead). The transcoder takes nothing after this.
    func finish() throws(LivePushError) -> [MediaPacket] {
        guard !finished else { return [] }
        finished = true
        var out: [MediaPacket] = []
        try decoder.send(nil)
        while try decoder.receive() { try resample(decoder.frame) }
        try resample(nil)
        while av_audio_fifo_size(fifo) >= Self.frameSamples { try encodeFrame(into: &out) }
        // The last frame may be short: libopus pads it and drains one more packet only when
        // its look-ahead still holds input.
        if av_audio_fifo_size(fifo) > 0 { try encodeFrame(into: &out, padded: false) }
        try encoder.send(nil)
        try drain(into: &out)
        return out
    }

    /// A gap: the resampler's delay line and the FIFO's tail (padded to a whole frame) go out on
    /// the old timeline; the next packet starts a new segment.
    private func endSegment(into out: inout [MediaPacket]) throws(LivePushError) {
        try resample(nil)
        resampler.reset()
        while av_audio_fifo_size(fifo) > 0 { try encodeFrame(into: &out) }
        segment = nil
    }

    private func resample(_ decoded: UnsafeMutablePointer<AVFrame>?) throws(LivePushError) {
        let fifo = fifo
        try resampler.convert(decoded) { planes, count throws(LivePushError) in
            let raw = UnsafeMutableRawPointer(planes).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
            guard av_audio_fifo_write(fifo, raw, count) >= count else { throw LivePushError(.outOfMemory, "audio FIFO") }
        }
    }

    /// Encodes up to one frame from the FIFO, padded with silence to 960 samples unless `padded` is false
    /// (the stream's last frame, which libopus pads itself).
    private func encodeFrame(into out: inout [MediaPacket], padded: Bool = true) throws(LivePushError) {
        let available = min(av_audio_fifo_size(fifo), Self.frameSamples)
        let size = padded ? Self.frameSamples : available
        av_frame_unref(frame)
        frame.pointee.format = sampleFormat.rawValue
        frame.pointee.sample_rate = Int32(format.sampleRate)
        av_channel_layout_default(&frame.pointee.ch_layout, Int32(format.channels))
        frame.pointee.nb_samples = size
        var rc = av_frame_get_buffer(frame, 0)
        guard rc >= 0 else { throw LivePushError(.outOfMemory, "audio frame: \(FF.describe(rc))") }
        let planes = UnsafeMutableRawPointer(frame.pointee.extended_data!).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        rc = av_audio_fifo_read(fifo, planes, available)
        guard rc == available else { throw LivePushError(.transcodeFailed, "audio FIFO read: \(FF.describe(rc))") }
        if size > available {
            av_samples_set_silence(frame.pointee.extended_data, available, size - available, Int32(format.channels), sampleFormat)
        }
        let start = segment ?? (expectedInput ?? 0, 0)
        let pts = start.start + start.frames * Self.frameMicros
        segment = (start.start, start.frames + 1)
        frame.pointee.pts = encodedSamples
        encodedSamples += Int64(size)
        pending.append(pts)
        try encoder.send(frame)
        try drain(into: &out)
    }

    /// Packets come out one per frame, in order; the ones the encoder adds when draining follow on.
    private func drain(into out: inout [MediaPacket]) throws(LivePushError) {
        while try encoder.receive() {
            let pkt = encoder.packet.pointee
            guard let base = pkt.data, pkt.size > 0 else { continue }
            let pts = pending.popFirst() ?? ((lastPts ?? 0) + Self.frameMicros)
            lastPts = pts
            out.append(MediaPacket(kind: .audio, data: Array(UnsafeBufferPointer(start: base, count: Int(pkt.size))),
                                   dts: pts, pts: pts, duration: Self.frameMicros, importance: .key))
        }
    }
}
