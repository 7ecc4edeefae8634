/// After the clock: the push's sound as Opus for the outputs that carry Opus (WHIP: WebRTC
/// carries no AAC; ``OutputNeeds``), encoded once (``AudioOpusTranscoder``) for all of them, on
/// the producer, before the outputs' queues; the other outputs take the AAC as it is. A send
/// loop only sends. Sound the push encodes itself (``AudioEncodeStage``) comes with the mixed
/// frames its AAC was made from (``MediaPacket/sound``): those are resampled to 48 kHz and
/// encoded, with no AAC decode. Copied AAC, already stamped on the output clock, is decoded.
///
/// Input switches happen before the clock: a new AudioSpecificConfig reopens the decoder, never
/// the encoder, so the Opus stream and its stamps run on. A failure (libopus missing, a stream
/// that no longer decodes: single damaged frames are skipped) ends the push with its code, as a
/// failing input does. Owned by the producer; only its figures are read elsewhere.
final class OpusStage {
    /// The outputs that take the Opus encode.
    let outputs: [Int]
    /// The outputs that take the push's AAC.
    let directOutputs: [Int]
    private let transcoder: AudioOpusTranscoder
    /// What the stage counted, for ``PushStats`` (read from any thread).
    let figures = OpusFigures()

    init(outputs: [Int], outputCount: Int, source: AudioTrackInfo) throws(LivePushError) {
        self.outputs = outputs
        directOutputs = (0..<outputCount).filter { !outputs.contains($0) }
        transcoder = try AudioOpusTranscoder(track: source)
    }

    /// The sound its outputs announce: 48 kHz, mono or stereo, as the encoder makes it.
    var trackInfo: AudioTrackInfo {
        var track = AudioTrackInfo(sampleRate: transcoder.format.sampleRate, channels: transcoder.format.channels,
                                   bitrate: transcoder.bitrate, audioSpecificConfig: [])
        track.codec = .opus
        track.opusHead = transcoder.opusHead
        return track
    }

    /// Takes one packet of the push's AAC (a frame or a new configuration), with the mixed
    /// sound it was encoded from when the push encoded it (`sound`), and hands the Opus packets
    /// it completes to `send`, with the outputs they go to, due when the AAC was.
    func process(_ packet: MediaPacket, sound: AudioFrame? = nil, send: (MediaPacket, [Int]) -> Void) throws(LivePushError) {
        if packet.isSequenceHeader {
            try transcoder.reconfigure(audioSpecificConfig: packet.data)
            return
        }
        let encoded: [MediaPacket]
        if let sound {
            encoded = try transcoder.transcode(sound, at: packet.pts)
        } else {
            encoded = try transcoder.transcode(packet)
        }
        for var opus in encoded {
            opus.due = packet.due
            send(opus, outputs)
        }
        figures.add(encoded.count)
    }

    /// The end of the push's sound: what the decoder and the encoder still hold.
    func finish(send: (MediaPacket, [Int]) -> Void) throws(LivePushError) {
        let encoded = try transcoder.finish()
        for opus in encoded { send(opus, outputs) }
        figures.add(encoded.count)
    }
}
