import DequeModule

/// A live input's backup file, looped, decoded on demand at the channel's format: a picture per
/// frame slot (the one due at the backup's own time, so a 30 fps file plays at its speed on a
/// 25 fps channel) and sound by the sample. Read on the producer's thread: a file never waits.
final class BackupFile {
    private let decoder: FeedDecoder
    private let audioFormat: AudioFormat
    private let name: String
    private var pictures = Deque<VideoFrame>()
    private var sound = SampleQueue()
    /// The backup's own time (µs from its start) of the next frame slot.
    private var clock: Int64 = 0
    /// Added to the file's timestamps: the length of the passes played before (it loops).
    private var passStart: Int64 = 0
    private var firstTime: Int64?
    /// The end of the furthest frame seen in this pass, on the backup's time.
    private var passEnd: Int64 = 0
    private var shown: VideoFrame?
    private var previousPicture: Int64?

    init(path: String, size: VideoSize, audio: AudioFormat) throws(LivePushError) {
        decoder = try FeedDecoder(demuxer: try FFDemuxer(path: path), size: size, audio: audio)
        audioFormat = audio
        name = path
    }

    /// From the start again: the backup goes on air.
    func restart() throws(LivePushError) {
        try rewind()
        pictures.removeAll()
        sound.removeAll()
        clock = 0
        passStart = 0
        passEnd = 0
        shown = nil
        previousPicture = nil
    }

    /// The picture for the next slot of `frameDuration`; nil for a backup without video.
    func nextPicture(frameDuration: Int64) throws(LivePushError) -> VideoFrame? {
        guard decoder.hasVideo else { return nil }
        while pictures.last.map({ $0.timestamp <= clock }) ?? true {
            try decodeMore()
        }
        while let first = pictures.first, first.timestamp <= clock {
            shown = pictures.removeFirst()
        }
        clock += frameDuration
        return shown ?? pictures.first
    }

    /// `count` samples of the backup's sound (silence for a backup without any).
    func takeAudio(count: Int, timestamp: Int64) throws(LivePushError) -> AudioFrame {
        var block = try AudioFrame(sampleRate: audioFormat.sampleRate, channels: audioFormat.channels,
                                   sampleCount: count, timestamp: timestamp)
        guard decoder.hasAudio else { return block }
        while sound.count < count { try decodeMore() }
        try SampleQueue.copy(sound.take(count), into: &block)
        return block
    }

    /// Decodes the next packets, looping at the end; pictures are put on the backup's time.
    private func decodeMore() throws(LivePushError) {
        var frames: [FeedDecoder.Frame] = []
        var emptyPasses = 0
        while frames.isEmpty {
            if try !decoder.decodeNext(into: &frames) {
                emptyPasses += passEnd == passStart ? 1 : 0
                guard emptyPasses < 2 else { throw LivePushError(.mediaReadFailed, "\(name): the backup has no frames") }
                try rewind()
            }
        }
        for frame in frames {
            switch frame {
            case .video(var picture):
                let first = firstTime ?? picture.timestamp
                firstTime = first
                picture.timestamp = passStart + max(0, picture.timestamp - first)
                // A picture lasts until the next: the last one of a pass as long as the one before.
                let spacing = previousPicture.map { max(1, picture.timestamp - $0) } ?? 40_000
                previousPicture = picture.timestamp
                passEnd = max(passEnd, picture.timestamp + spacing)
                pictures.append(picture)
            case .audio(let block):
                sound.append(block)
            }
        }
        // Bounded whatever the file's interleaving: two seconds of each.
        while pictures.count > 120 { pictures.removeFirst() }
        sound.dropOldest(whileMoreThan: 2 * audioFormat.sampleRate)
    }

    private func rewind() throws(LivePushError) {
        guard decoder.rewind() else { throw LivePushError(.mediaReadFailed, "\(name): cannot loop the backup") }
        // The next pass follows the furthest picture of this one.
        passStart = max(passStart, passEnd)
        firstTime = nil
        previousPicture = nil
    }
}
