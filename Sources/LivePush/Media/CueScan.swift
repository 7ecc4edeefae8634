#if canImport(Glibc)
import Glibc
#endif

/// A file's SCTE-35 cues, read in one pass of the demuxer before the push (nothing is
/// decoded), so that its opportunities can be resolved up front (a VOD input).
enum CueScan {
    /// The scan for `path` when it is a file that can be read twice (not a pipe, not stdin).
    static func upFront(of path: String) -> (() -> [SourceCue])? {
        var st = stat()
        guard path != FFDemuxer.standardInput, stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return { cues(inFile: path) }
    }

    /// Every cue the file carries, where it arrives; malformed sections are left out here (the
    /// push reports them when it reads them). Empty when the file has no cue stream.
    static func cues(inFile path: String) -> [SourceCue] {
        guard let demuxer = try? FFDemuxer(path: path), let cueStream = demuxer.streams.first(where: \.isSCTE35) else { return [] }
        var cues: [SourceCue] = []
        var lastTime: Int64 = 0
        while (try? demuxer.read()) == true {
            let index = demuxer.packet.pointee.stream_index
            if index == cueStream.index {
                if let cue = try? SourceCue(bytes: demuxer.packetBytes, arrival: lastTime) { cues.append(cue) }
            } else if let time = demuxer.packetMicros {
                lastTime = max(lastTime, time)
            }
        }
        return cues
    }
}
