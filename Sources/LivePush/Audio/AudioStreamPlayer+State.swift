extension AudioStreamPlayer {
    /// What the mixer and the decode jobs share, under the player's lock.
    struct PlayerState {
        var ring = AudioRingBuffer(channels: 2, capacity: AudioStreamPlayer.ringCapacity)
        var format: AudioFormat?
        /// Bumped on every format change, so a decoder never writes samples of the old format.
        var generation = 0
        var ended = false
        var failed = false
        var stopped = false
        /// Network sources: whether enough is buffered to play.
        var ready = false
        /// Opening the source is over: it opened (and the owner was told), or it failed.
        var openingOver = false
        var written: Int64 = 0
        var consumed: Int64 = 0
        /// Values of `written` where a new loop pass begins, and where the current pass began in `consumed`.
        var passBoundaries: [Int64] = []
        var passStart: Int64 = 0
        var passesDone = 0

        /// Switches to `newFormat`, dropping what was decoded for the old one. Returns whether
        /// it changed (a decode job should then start on the new one).
        mutating func setFormat(_ newFormat: AudioFormat) -> Bool {
            guard format != newFormat else { return false }
            format = newFormat
            generation += 1
            ring.reset(channels: newFormat.channels)
            written = 0
            consumed = 0
            passBoundaries = []
            passStart = 0
            passesDone = 0
            ready = false
            return true
        }
    }

    /// Where the decoding stands between jobs; only the decode jobs use it, one at a time.
    struct DecodeState {
        var openingDone = false
        var decoder: AudioFileDecoder?
        /// Samples decoded in the current loop pass.
        var passSamples: Int64 = 0
        /// Decoded samples that did not fit in the ring, written first by the next job.
        var leftover: Leftover?
        /// The source ended with a leftover still to write: the player ends once it is written.
        var endsAfterLeftover = false
    }

    /// Decoded samples kept until the ring has room: planar, channel `c` at `c * length`.
    struct Leftover {
        private(set) var samples: [Float]
        let channels: Int
        let generation: Int
        /// Samples per channel already written to the ring.
        var offset = 0

        init(_ planes: [UnsafeBufferPointer<Float>], from start: Int, generation: Int) {
            channels = planes.count
            self.generation = generation
            samples = planes.flatMap { $0[start...] }
        }

        /// Samples per channel still to write.
        var remaining: Int { samples.count / max(1, channels) - offset }

        /// Adds more decoded samples after the ones still to write.
        mutating func append(_ planes: [UnsafeBufferPointer<Float>]) {
            let length = samples.count / max(1, channels)
            var merged: [Float] = []
            merged.reserveCapacity(channels * (remaining + (planes.first?.count ?? 0)))
            for c in 0..<channels {
                merged += samples[(c * length + offset)..<((c + 1) * length)]
                merged += planes[c]
            }
            samples = merged
            offset = 0
        }
    }
}
