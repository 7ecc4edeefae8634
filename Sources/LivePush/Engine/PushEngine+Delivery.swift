/// The producer's side of the outputs: whether they have room for a stamped packet
/// (back-pressure; when it is due, the ``Switcher`` says), and handing it, its sequence header and the cues due by it to every output and the recording.
extension PushEngine {
    /// Sends cues (the switcher says which are due): as data messages (``PushConfig/cueFormat``)
    /// to RTMP outputs and the recording, as SCTE-35 sections to SRT outputs (in the stream) and
    /// HLS outputs (in the segments, and as the playlist's cue tags). The push's video encode
    /// keys at each splice, so that an HLS segment starts there (a copied stream keys where its
    /// source did: an HLS output moves the cut to its next keyframe, and says so).
    func deliverCues(_ cues: [AdCue], through afterClock: StagesAfterClock) {
        for cue in cues {
            afterClock.videoEncode?.requestKeyframe(atOrAfter: cue.spliceTime)
            for output in outputs {
                output.push(output.kind.carriesSpliceSections ? .spliceSection(cue.section.encoded(), at: cue.sendAt)
                                                : .dataMessage(cue.message(config.cueFormat(forOutput: output.id)), at: cue.sendAt))
            }
            recorder?.offer(.dataMessage(cue.message(config.cueFormat), at: cue.sendAt))
        }
    }

    /// Wakes the outputs' senders for what the producer queued: once per batch (or per window
    /// of the shared scheduler), so that a sender takes a whole batch at once rather than
    /// waking for every packet.
    func wakeSenders() {
        for output in outputs { output.wakeSender() }
    }

    /// Hands a packet to every output and the recording: what each output needs. With
    /// renditions, video goes as it is only to the outputs that have none; the others get their
    /// rendition's encode of it. Sound goes as it is to the outputs that take AAC, and as the one
    /// Opus encode to those that carry Opus.
    ///
    /// The picture a packet may carry for the renditions (``MediaPacket/picture``) goes to the
    /// rendition stage only: never into an output's queue or the recording.
    ///
    /// Video goes through the push's encode first (``VideoEncodeStage``), when it has one: raw
    /// pictures come out of it coded, copied packets as they are (after what it held). Sound
    /// goes through the push's sound encode (``AudioEncodeStage``) the same way, unless it is
    /// copied and the encode holds nothing to send before it (a push that only copies its
    /// sound: at 1000 channels the hop was 2.7% of the process).
    func deliver(_ carrying: MediaPacket, through afterClock: StagesAfterClock) throws(LivePushError) {
        if let encode = afterClock.videoEncode, carrying.kind == .video {
            try encode.process(carrying) { (coded: MediaPacket) throws(LivePushError) in try deliverCoded(coded, through: afterClock) }
        } else if let encode = afterClock.audioEncode, carrying.kind == .audio, encode.takes(carrying) {
            try encode.process(carrying) { (coded: MediaPacket) throws(LivePushError) in try deliverCoded(coded, through: afterClock) }
        } else if carrying.isRawPicture || carrying.isRawSound {
            // A push without video (it announced none) has no encode: a break's fill that has
            // pictures (an ad to be transcoded, a slate) shows none of them: the outputs announced no video.
            // Likewise sound on a push that announced none.
            return
        } else {
            try deliverCoded(carrying, through: afterClock)
        }
    }

    /// Hands a coded packet on (``deliver(_:through:)``), after the first coded sound at the
    /// start of a push that encodes it (``FirstSoundGate``).
    private func deliverCoded(_ carrying: MediaPacket, through afterClock: StagesAfterClock) throws(LivePushError) {
        if let gate = afterClock.firstSound, !gate.isOpen {
            try gate.admit(carrying) { (packet: MediaPacket) throws(LivePushError) in try deliverInOrder(packet, through: afterClock) }
        } else {
            try deliverInOrder(carrying, through: afterClock)
        }
    }

    private func deliverInOrder(_ carrying: MediaPacket, through afterClock: StagesAfterClock) throws(LivePushError) {
        var packet = carrying
        packet.dropRawMedia()
        recorder?.offer(packet)
        if let renditions = afterClock.renditions, packet.kind == .video {
            for id in renditions.directOutputs { outputs[id].push(packet) }
            try renditions.process(carrying) { push($0, to: $1) }
        } else if let opus = afterClock.opus, packet.kind == .audio {
            for id in opus.directOutputs { outputs[id].push(packet) }
            try opus.process(packet, sound: carrying.sound) { push($0, to: $1) }
        } else {
            for output in outputs { output.push(packet) }
        }
    }

    /// The end of the push's media: what the stages after the clock still hold.
    func finish(_ afterClock: StagesAfterClock) throws(LivePushError) {
        try afterClock.videoEncode?.finish { (coded: MediaPacket) throws(LivePushError) in try deliverCoded(coded, through: afterClock) }
        try afterClock.audioEncode?.finish { (coded: MediaPacket) throws(LivePushError) in try deliverCoded(coded, through: afterClock) }
        try afterClock.firstSound?.finish { (packet: MediaPacket) throws(LivePushError) in try deliverInOrder(packet, through: afterClock) }
        try afterClock.renditions?.finish { push($0, to: $1) }
        try afterClock.opus?.finish { push($0, to: $1) }
    }

    /// Hands the Opus stage's packet to the outputs that take it.
    func push(_ packet: MediaPacket, to ids: [Int]) {
        for id in ids { outputs[id].push(packet) }
    }

    /// Hands a rendition's packet to the outputs that take it, tagged with the variant it is
    /// of each one's ladder.
    func push(_ packet: MediaPacket, to targets: [RenditionStage.Target]) {
        for target in targets {
            var tagged = packet
            tagged.variant = target.variant
            outputs[target.output].push(tagged)
        }
    }

    /// Back-pressure (`--fast`): the output to wait for before the next packet, if any
    /// (``BackpressurePlan``). The disconnected outputs the plan does not wait for shed now;
    /// no output sheds on its own when a packet arrives.
    func outputAwaitingRoom() -> PushOutput? {
        guard config.pacing == .asFastAsPossible else { return nil }
        // One lock acquisition per output per packet: both facts are read together.
        let plan = BackpressurePlan(room: outputs.map(\.room))
        for id in plan.shed { outputs[id].shedWhileAnotherCarriesThePush() }
        return plan.waitFor.map { outputs[$0] }
    }
}
