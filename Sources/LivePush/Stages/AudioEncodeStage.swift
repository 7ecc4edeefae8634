/// After the clock: the push's one sound encode. Inputs that decode or make sound (a file's
/// transcode, a video-only file's generated track, the app's frames, a still's silence, a live
/// feed's slots) yield it raw (``MediaPacket/isRawSound``), stamped on the output clock like
/// any packet; here it goes through the push's ``AudioMixer`` (music, effects, volumes) one
/// AAC frame (1024 samples) at a time and is encoded once, with the push's audio settings. The
/// coded packets go on to delivery, due when the raw sound that completed them was.
///
/// Copied AAC (stream copy: the shortcut edge) and sequence headers pass through; what the
/// encoder holds goes out before them (the sound of the input going off air belongs before the
/// switch), and the next raw sound starts a fresh encoder. Loops and switches between inputs
/// that yield raw sound need no reset: after the clock the timeline is continuous, and
/// ``SoundPlacement`` fills a gap the clock left with silence (the next input starts where
/// the pictures ended) or cuts an overlap, to within 64 samples.
///
/// One format per push (``format``): the push's input's, as it declared it (else the copied
/// track's rate and channels). Raw sound of another rate or channel count (a slate's, a fill's)
/// is converted here (``AudioFrameResampler``), so the outputs never see a new configuration
/// between inputs that yield raw sound. Its header (``audioSpecificConfig``) depends only on
/// the format and is known at the start without an encoder; the encoder (and the mixer's
/// lease) opens at the start only when the push's input yields raw sound, else with the first
/// raw sound: a push that only copies its sound holds none.
///
/// Priming: an AAC encoder's first packet is its priming frame, stamped a frame before the
/// first sample (-1024 samples). Before the clock it came out of each input's encoder and the
/// clock dropped it at every switch (``OutputClock/admits(_:)``); here it would land before the
/// push's start (a negative timestamp) or over the sound already sent, so it is dropped the
/// same way, by the same rule (a packet that lies mostly before the sound it encodes). What
/// follows keeps the encoder's stamps, which are the input samples' times: the sound stays
/// in sync with the pictures.
/// Owned by the producer.
final class AudioEncodeStage {
    let format: AudioFormat
    let bitrate: Int
    /// What outputs announce for this encode, and the switcher sends before raw sound that
    /// follows copied sound of another configuration.
    let audioSpecificConfig: [UInt8]
    private let mixer: AudioMixer?
    /// Live loudness normalisation after the mixer (nil: the sound is encoded as mixed). One
    /// per push, across the encoders opened between inputs, so its meters cover the push.
    private let loudness: LoudnessStage?
    /// Nil until raw sound comes (or from the start for a push whose input yields it), and
    /// again once copied sound follows: it holds the mixer's lease, so music can be started
    /// only while raw sound is on air (``LivePusher`` refuses it while the sound is copied).
    private var encoder: AudioAACEncoder?
    /// Raw sound went in since the last drain: the encoder may hold some.
    private var holdsSamples = false
    private var placement: SoundPlacement
    /// The first sample of a fresh encoder (µs): what it stamps before is its priming.
    private var primingBefore: Int64?
    private var resampler: AudioFrameResampler?
    private var encoded: [MediaPacket] = []

    /// Each coded packet carries the mixed sound it was encoded from (the push has Opus outputs).
    private let keepsMixedSound: Bool
    /// The push's input yields raw sound: the push's first sound comes out of this encode.
    let encodesFromStart: Bool

    /// `main`: the push's input itself yields raw sound (the encoder opens now: the push will
    /// need it at once, and the mixer attaches before the first frame, as it did with the input).
    /// `keepsMixedSound`: the coded packets carry the mixed frames they were made from
    /// (``MediaPacket/sound``), for the push's Opus encode (``OpusStage``): WHIP outputs hear
    /// the music too, and nothing decodes this AAC again.
    /// `loudness`: normalise the mixed sound to this target, measured into `figures`.
    init(format: AudioFormat, bitrate: Int, mixer: AudioMixer?, main: Bool, keepsMixedSound: Bool = false,
         loudness: LoudnessTarget? = nil, figures: LoudnessFigures? = nil) throws(LivePushError) {
        guard let config = AACLowComplexityConfig.audioSpecificConfig(sampleRate: format.sampleRate, channels: format.channels) else {
            throw LivePushError(.unsupportedCodec, "AAC at \(format)")
        }
        self.format = format
        self.bitrate = bitrate
        self.mixer = mixer
        self.loudness = loudness.map { LoudnessStage(target: $0, format: format, figures: figures ?? LoudnessFigures()) }
        self.keepsMixedSound = keepsMixedSound
        encodesFromStart = main
        audioSpecificConfig = config
        // Inputs stamp their sound by sample count (contiguous to a sample), so a difference
        // of more than a resampler's delay or µs rounding is a gap or an overlap the clock made:
        // left alone, even one AAC frame of it puts the sound after a splice that much early.
        placement = SoundPlacement(tolerance: 64)
        if main { _ = try openEncoder() }
    }

    /// The track outputs announce when the push's input yields raw sound.
    var trackInfo: AudioTrackInfo {
        AudioTrackInfo(sampleRate: format.sampleRate, channels: format.channels, bitrate: bitrate,
                       audioSpecificConfig: audioSpecificConfig)
    }

    /// Whether `packet` must go through ``process(_:send:)``: raw sound, or copied sound or a
    /// header while the encoder holds samples (they go out first). Anything else passes
    /// through unchanged, so delivery may hand it on directly.
    func takes(_ packet: MediaPacket) -> Bool { holdsSamples || packet.isRawSound }

    /// Takes one packet of the push's sound, stamped on the output clock, and hands on what
    /// delivery takes: the AAC frames raw sound completed, or a copied packet or header (after
    /// what the encoder held).
    func process(_ packet: MediaPacket, send: (MediaPacket) throws(LivePushError) -> Void) throws(LivePushError) {
        guard packet.isRawSound, var sound = packet.sound else {
            if holdsSamples { try drain(due: packet.due, send: send) }
            try send(packet)
            return
        }
        sound.timestamp = packet.pts
        if sound.sampleRate != format.sampleRate || sound.channels != format.channels {
            if resampler == nil { resampler = try AudioFrameResampler(format: format) }
            guard let converted = try resampler?.convert(sound) else { return }
            sound = converted
        }
        let encoder = try openEncoder()
        let start = Int64(format.samples(inMicros: sound.timestamp))
        let decision = placement.place(at: start, count: sound.sampleCount)
        if encoder.nextPts == nil {
            encoder.nextPts = start
            primingBefore = format.micros(ofSamples: start)
        }
        try encoder.writeSilence(count: decision.silence)
        try encoder.write(sound, skipping: decision.skip)
        holdsSamples = true
        encoded.removeAll(keepingCapacity: true)
        try encoder.encodeFullFrames(into: &encoded)
        try hand(encoded, due: packet.due, send: send)
    }

    /// The end of the push's sound: what the encoder still holds.
    func finish(send: (MediaPacket) throws(LivePushError) -> Void) throws(LivePushError) {
        if holdsSamples { try drain(due: .min, send: send) }
    }

    /// The encoder, opened once: it attaches the push's mixer for the push's life.
    private func openEncoder() throws(LivePushError) -> AudioAACEncoder {
        if let encoder { return encoder }
        let opened = try AudioAACEncoder(format: format, bitrate: bitrate, mixer: mixer, loudness: loudness)
        opened.keepsMixedSound = keepsMixedSound
        encoder = opened
        return opened
    }

    /// What the encoder holds goes out (its tail padded to a frame); a drained encoder cannot
    /// go on, so it goes with its mixer lease, and a fresh one takes the next raw sound on a
    /// new timeline.
    private func drain(due: Int64, send: (MediaPacket) throws(LivePushError) -> Void) throws(LivePushError) {
        holdsSamples = false
        guard let encoder else { return }
        encoded.removeAll(keepingCapacity: true)
        try encoder.finish(into: &encoded)
        self.encoder = nil
        placement.reset()
        try hand(encoded, due: due, send: send)
        encoded.removeAll(keepingCapacity: true)
        primingBefore = nil
    }

    private func hand(_ packets: [MediaPacket], due: Int64, send: (MediaPacket) throws(LivePushError) -> Void) throws(LivePushError) {
        for var coded in packets {
            // The priming frame (see the type's comment): the rule the clock applied to it.
            if let primingBefore, coded.pts + coded.duration / 2 <= primingBefore { continue }
            coded.due = due
            try send(coded)
        }
    }
}
