/// Reading the input on air: the next packet, the end of an input (loop, next entry, the
/// slate holding), and an input going off air.
extension Switcher {
    /// Packets an input may produce while its audio catches up with its pictures at a switch.
    static let catchUpLimit = 500
    /// Of those, raw pictures (an input whose pictures the push encodes) held at most: 500 of
    /// them are 1.5 GB at 1080p, when the input's sound ended long before its pictures.
    static let catchUpPictureBytes = 64 << 20

    /// Reads the input on air (switching, looping, starting and ending breaks) until a packet
    /// is pending (or a slate has ended, or the next input is not open yet). False when the
    /// input is over, or the push was stopped.
    mutating func readUntilPending(stopping: () -> Bool) throws(LivePushError) -> Bool {
        while !hasPending {
            if !leftover.isEmpty {
                makeLeftoverPending()
                return true
            }
            if awaitsFill {
                // A break's fill is opening on another thread: this one does not wait for it.
                guard fillIsReady() else { return true }
                awaitsFill = false
                // A break's first: the main input's packet it waited before, in replay, starts it.
                if breakOpening == nil { takeNextFill() }
                continue
            }
            if awaitsNextInput, let sequence = setup.sequence {
                // Opened ahead on another thread: this one does not wait for it.
                guard sequence.nextInputIsReady(after: input, whenReady: setup.nextInputReady) else { return true }
                awaitsNextInput = false
                guard let next = sequence.nextInput() else { return false }
                putOnAir(next, from: sequence)
                continue
            }
            if skipping {
                skipping = false
                try takeOffAir()
                guard let sequence = setup.sequence else { return false }
                sequence.inputSkipped(input, unsent: held.removeValue(forKey: ObjectIdentifier(input)) ?? [])
                awaitsNextInput = true
                continue
            }
            if background != nil {
                guard try advanceBreak() else { return false }
                if background == nil { continue }
            }
            guard let packet = try nextPacket() else {
                if !heldBack.isEmpty {
                    replay = heldBack
                    heldBack = []
                    continue
                }
                if background != nil {
                    nextFill()
                    continue
                }
                // A slate that ends: hold on the input until a command takes it off air.
                if suspended != nil { return true }
                if setup.sequence != nil {
                    awaitsNextInput = true
                    continue
                }
                if case .times(let total) = setup.looping, pass >= total { return false }
                if stopping() { return false }
                try input.rewind()
                switchTo(input, fromStart: true)
                pass += 1
                continue
            }
            if packet.kind == .cue {
                receiveCue(packet)
                continue
            }
            if holdsBack(packet) || holdsFillSound(packet) { continue }
            if try startsBreak(before: packet) { continue }
            if releasesHeldBack(before: packet) { continue }
            if packet.kind == .video && awaitingKeyframe {
                guard packet.isKeyframe else { continue }
                awaitingKeyframe = false
            }
            guard clock.admits(packet) else { continue }
            makePending(packet)
        }
        return true
    }

    /// The next packet of the input on air (what it held first). When it fails mid-way and a
    /// sequence plays, what the sequence puts in its place goes on air instead.
    private mutating func nextPacket() throws(LivePushError) -> MediaPacket? {
        if !replay.isEmpty { return replay.removeFirst() }
        do {
            return try input.nextPacket()
        } catch {
            guard let sequence = setup.sequence, let standIn = sequence.inputFailed(input, error) else { throw error }
            switchTo(standIn, fromStart: true)
            return try nextPacket()
        }
    }

    /// The sequence's next input goes on air; it says which cues belong to its start.
    private mutating func putOnAir(_ next: any MediaInput, from sequence: any InputSequence) {
        switchTo(next, fromStart: true)
        // Not I/O: a trim of the allocator's heaps, scheduled on a utility thread.
        FreedMemory.releaseSoon()  // the entry that went off air held a decoder and an encoder
        // The new segment starts where the output ends: that is the splice.
        schedule(sequence.cues(forInputStartingAt: clock.end))
    }

    /// The input on air gives up what it already took; it is stamped now, on its own segment.
    /// Then, when its audio ends short of its pictures (demuxing order, encoder delay), it is
    /// read on until the audio reaches where the pictures end: the next input then starts on
    /// both tracks at once, with no hole in the sound. What it produces beyond that point is
    /// held for when it is on air again.
    ///
    /// `cut` (a break's start or end, output time): what the input gives up is sent up to its
    /// first picture (in decode order) that shows at or after the cut; the pictures from there
    /// on are held (a B-frame after it would lack its reference), and so is the sound from
    /// where the pictures stop.
    mutating func takeOffAir(cut: Int64? = nil) throws(LivePushError) {
        var held = replay
        replay = []
        var pastCut = false
        for packet in try input.suspend() {
            if let cut, packet.kind == .video, !pastCut {
                pastCut = clock.presentationTime(of: packet).map { $0 >= cut } ?? true
            }
            let soundPastPictures = packet.kind == .audio && (clock.presentationTime(of: packet).map { $0 >= clock.videoEnd } ?? true)
            if cut != nil && (pastCut || soundPastPictures) { held.append(packet) } else { leave(packet) }
        }
        let audioFrame = MediaTime(samples: 1024, rate: max(1, input.info.audio?.sampleRate ?? 44_100)).microseconds
        var pulls = 0, pictureBytes = 0
        while input.info.video != nil && input.info.audio != nil,
              clock.audioEnd + audioFrame <= clock.videoEnd, pulls < Self.catchUpLimit, pictureBytes < Self.catchUpPictureBytes,
              let packet = try input.nextPacket() {
            pulls += 1
            if let picture = packet.picture { pictureBytes += picture.width * picture.height * 3 / 2 }
            if packet.kind == .audio, let time = clock.presentationTime(of: packet), time < clock.videoEnd {
                leave(packet)
            } else {
                held.append(packet)
                // Sound reached where the pictures end (what is short of it was held back).
                if packet.kind == .audio { break }
            }
        }
        self.held[ObjectIdentifier(input)] = held
    }

    /// Stamps a packet of the input going off air, for sending before the switch.
    private mutating func leave(_ packet: MediaPacket) {
        if packet.kind == .cue {
            receiveCue(packet)
            return
        }
        if packet.kind == .video && awaitingKeyframe && !packet.isKeyframe { return }
        leftover.append(clock.stamp(packet))
    }
}
