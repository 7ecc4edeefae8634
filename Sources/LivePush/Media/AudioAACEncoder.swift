import CFFmpeg
import DequeModule

/// The end of every encoded audio track: an AVAudioFifo of planar float samples cut into
/// AAC frames (1024 samples), each passed through the ``AudioMixer`` (BGM, effects, volumes)
/// as an ``AudioFrame``, then encoded with FFmpeg's native AAC encoder. The ASC is the
/// encoder's global header; packets are raw AAC frames, stamped by sample count.
final class AudioAACEncoder {
    let format: AudioFormat
    let bitrate: Int
    let audioSpecificConfig: [UInt8]
    private let encoder: FFEncoder
    private let fifo: OpaquePointer
    private let mixer: AudioMixer?
    private let lease: AudioMixerLease?
    /// The loudness stage after the mixer (nil: the sound goes to the encoder as mixed). It
    /// holds two frames, each handed on with the second after it (see ``LoudnessStage``).
    private let loudness: LoudnessStage?
    /// Next encoder input pts in samples (1/sampleRate); nil until the first samples arrive.
    var nextPts: Int64?
    /// Each packet carries the mixed frame it was encoded from (``MediaPacket/sound``): the
    /// push's Opus encode takes the same sound, music and all, without decoding this one.
    var keepsMixedSound = false
    /// Mixed frames sent to the encoder whose packets have not come out yet, by their pts
    /// (samples): AAC holds one frame (its priming), so this holds one or two.
    private var mixedSound: Deque<(pts: Int64, sound: AudioFrame)> = []

    /// `mixer` nil: the track is encoded as it is (no BGM, no effects).
    init(format: AudioFormat, bitrate: Int, mixer: AudioMixer?, loudness: LoudnessStage? = nil) throws(LivePushError) {
        self.loudness = loudness
        self.format = format
        self.bitrate = bitrate
        guard let fifo = av_audio_fifo_alloc(AV_SAMPLE_FMT_FLTP, Int32(format.channels), 4096) else {
            throw LivePushError(.outOfMemory, "audio FIFO")
        }
        self.fifo = fifo
        encoder = try Self.makeEncoder(format: format, bitrate: bitrate)
        audioSpecificConfig = encoder.extradata
        guard !audioSpecificConfig.isEmpty else {
            throw LivePushError(.encoderUnavailable, "\(encoder.name) gave no AudioSpecificConfig")
        }
        self.mixer = mixer
        lease = mixer?.attach(format: format)
    }

    deinit {
        av_audio_fifo_free(fifo)
    }

    private static func makeEncoder(format: AudioFormat, bitrate: Int) throws(LivePushError) -> FFEncoder {
        guard let codec = avcodec_find_encoder_by_name("aac") ?? avcodec_find_encoder(AV_CODEC_ID_AAC) else {
            throw LivePushError(.encoderUnavailable, "no AAC encoder")
        }
        return try FFEncoder(codec: codec) { ctx in
            ctx.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
            ctx.pointee.sample_rate = Int32(format.sampleRate)
            av_channel_layout_default(&ctx.pointee.ch_layout, Int32(format.channels))
            ctx.pointee.bit_rate = Int64(bitrate)
            ctx.pointee.time_base = AVRational(num: 1, den: Int32(format.sampleRate))
        }
    }

    var frameSize: Int32 { Int32(encoder.frameSize > 0 ? encoder.frameSize : 1024) }

    /// Samples waiting in the FIFO.
    var buffered: Int32 { av_audio_fifo_size(fifo) }

    /// Appends `count` samples from planar float planes.
    func write(_ planes: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?, count: Int32) throws(LivePushError) {
        guard count > 0, let planes else { return }
        let raw = UnsafeMutableRawPointer(planes).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        guard av_audio_fifo_write(fifo, raw, count) >= count else { throw LivePushError(.outOfMemory, "audio FIFO") }
    }

    /// Queues the samples of `frame` (in the encoder's format), less its first `skipping`.
    func write(_ frame: AudioFrame, skipping: Int = 0) throws(LivePushError) {
        let count = frame.sampleCount - skipping
        guard count > 0 else { return }
        if skipping == 0 { return try write(frame.storage.frame.pointee.extended_data, count: Int32(count)) }
        var planes = (0..<frame.channels).map { UnsafeMutableRawPointer(mutating: frame.samples(ofChannel: $0, from: skipping)) as UnsafeMutableRawPointer? }
        guard av_audio_fifo_write(fifo, &planes, Int32(count)) >= count else { throw LivePushError(.outOfMemory, "audio FIFO") }
    }

    /// Appends `count` samples of silence.
    func writeSilence(count: Int) throws(LivePushError) {
        guard count > 0 else { return }
        let silence = try AudioFrame(sampleRate: format.sampleRate, channels: format.channels, sampleCount: count)
        try write(silence.storage.frame.pointee.extended_data, count: Int32(count))
    }

    /// Encodes every whole frame in the FIFO.
    func encodeFullFrames(into out: inout [MediaPacket]) throws(LivePushError) {
        while buffered >= frameSize {
            try encodeFrame(samples: frameSize, into: &out)
        }
    }

    /// End of the track: the FIFO's tail (padded to a frame) and the encoder's delay.
    func finish(into out: inout [MediaPacket]) throws(LivePushError) {
        try encodeFullFrames(into: &out)
        let rest = buffered
        if rest > 0 { try encodeFrame(samples: rest, into: &out) }
        for (frame, pts) in try loudness?.flush() ?? [] { try send(frame, pts: pts, into: &out) }
        try encoder.send(nil)
        try drain(into: &out)
    }

    /// Encodes `samples` samples from the FIFO, padded with silence to a whole frame, after
    /// the mixer has had its turn.
    private func encodeFrame(samples: Int32, into out: inout [MediaPacket]) throws(LivePushError) {
        let size = frameSize
        let pts = nextPts ?? 0
        var frame = try AudioFrame(sampleRate: format.sampleRate, channels: format.channels, sampleCount: Int(size),
                                   timestamp: format.micros(ofSamples: pts))
        let avFrame = frame.storage.frame
        let raw = UnsafeMutableRawPointer(avFrame.pointee.extended_data!).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        _ = av_audio_fifo_read(fifo, raw, samples)  // the frame is silence beyond what was read
        try mixer?.process(&frame)
        nextPts = pts + Int64(size)
        if let loudness {
            // The frame two before this one, normalised: it keeps its own pts.
            guard let (normalised, normalisedPts) = try loudness.process(frame, pts: pts) else { return }
            return try send(normalised, pts: normalisedPts, into: &out)
        }
        try send(frame, pts: pts, into: &out)
    }

    private func send(_ frame: AudioFrame, pts: Int64, into out: inout [MediaPacket]) throws(LivePushError) {
        if keepsMixedSound { mixedSound.append((pts, frame)) }
        frame.storage.frame.pointee.pts = pts
        try encoder.send(frame.storage.frame)
        try drain(into: &out)
    }

    private func drain(into out: inout [MediaPacket]) throws(LivePushError) {
        let tb = encoder.timeBase
        while try encoder.receive() {
            let pkt = encoder.packet.pointee
            guard let base = pkt.data, pkt.size > 0 else { continue }
            let dts = FF.micros(pkt.dts, tb) ?? FF.micros(pkt.pts, tb) ?? 0
            let pts = max(FF.micros(pkt.pts, tb) ?? dts, dts)
            let duration = FF.micros(pkt.duration > 0 ? pkt.duration : Int64(frameSize), tb) ?? 0
            var packet = MediaPacket(kind: .audio, data: Array(UnsafeBufferPointer(start: base, count: Int(pkt.size))),
                                     dts: dts, pts: pts, duration: duration, importance: .key)
            if keepsMixedSound {
                // The frame whose pts the packet has (the priming packet, before the first, has none).
                while let first = mixedSound.first, first.pts < pkt.pts { mixedSound.removeFirst() }
                if let first = mixedSound.first, first.pts == pkt.pts { packet.sound = mixedSound.removeFirst().sound }
            }
            out.append(packet)
        }
    }
}
