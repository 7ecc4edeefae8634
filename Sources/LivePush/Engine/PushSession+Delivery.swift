/// The producer's side of the outputs: when a stamped packet may go (pacing, back-pressure),
/// and handing it, its sequence header and the cues due by it to every output and the recording.
extension PushSession {
    /// Sends the cues due by output time `time`: as data messages (``PushConfig/cueFormat``) to
    /// RTMP outputs and the recording, as SCTE-35 sections in the stream to SRT outputs.
    func deliverCues(dueBy time: Int64, _ air: inout OnAir) {
        while let cue = air.cues.first, cue.sendAt <= time {
            air.cues.removeFirst()
            for output in outputs {
                output.push(output.kind == .srt ? .spliceSection(cue.section.encoded(), at: cue.sendAt)
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

    /// Hands a packet to every output and the recording. With renditions, video goes as it is
    /// only to the outputs that asked for none; the others get their rendition's encode of it.
    func deliver(_ packet: MediaPacket) throws(LivePushError) {
        recorder?.offer(packet)
        guard let renditions, packet.kind == .video else {
            for output in outputs { output.push(packet) }
            return
        }
        for id in renditions.directOutputs { outputs[id].push(packet) }
        try renditions.process(packet, send: push)
    }

    /// Hands a rendition's packet to the outputs that take it.
    func push(_ packet: MediaPacket, to ids: [Int]) {
        for id in ids { outputs[id].push(packet) }
    }

    func takeOwedHeader(for packet: MediaPacket, _ air: inout OnAir) -> MediaPacket? {
        switch packet.kind {
        case .video:
            guard let configuration = air.owedHeaders.video else { return nil }
            air.owedHeaders.video = nil
            return .sequenceHeader(.video, configuration: configuration, at: packet.dts)
        case .audio:
            guard let configuration = air.owedHeaders.audio else { return nil }
            air.owedHeaders.audio = nil
            return .sequenceHeader(.audio, configuration: configuration, at: packet.dts)
        case .data, .cue:
            return nil
        }
    }

    /// Nil when the packet may go now, else how long to wait (nil inside: until woken).
    func pendingWait(for packet: MediaPacket, _ air: inout OnAir) -> Duration?? {
        if air.clock.isPaused { return .some(nil) }
        guard config.pacing == .realTime else { return nil }
        let now = monotonicMicroseconds()
        return air.pacing.wait(forPacketDue: air.clock.due(packet.dts, now: now), now: now).map { .some(.microseconds($0)) }
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
