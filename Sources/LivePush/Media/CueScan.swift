#if canImport(Glibc)
import Glibc
#endif

/// A file's SCTE-35 cues, read in one pass of the demuxer before the push (nothing is
/// decoded), so that its opportunities can be resolved up front (a VOD input). A whole file's
/// pass is blocking I/O: it runs on ``ConnectionWorkers/scanning``, never on a pacing thread.
enum CueScan {
    /// The scan for `path` when it is a file that can be read twice (not a pipe, not stdin).
    static func upFront(of path: String) -> (@Sendable (_ keepGoing: @Sendable () -> Bool) -> [SourceCue])? {
        var st = stat()
        guard path != FFDemuxer.standardInput, stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return { keepGoing in cues(inFile: path, while: keepGoing) }
    }

    /// Every cue the file carries, where it arrives; malformed sections are left out here (the
    /// push reports them when it reads them). Empty when the file has no cue stream (or cannot
    /// be opened: the push itself reports that). What was found so far once `keepGoing` says no.
    static func cues(inFile path: String, while keepGoing: () -> Bool = { true }) -> [SourceCue] {
        guard let demuxer = try? FFDemuxer(path: path), let cueStream = demuxer.streams.first(where: \.isSCTE35) else { return [] }
        var cues: [SourceCue] = []
        var lastTime: Int64 = 0
        // A read error ends the scan like the file's end: the push reports it when it gets there.
        while keepGoing(), (try? demuxer.read()) == true {
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
