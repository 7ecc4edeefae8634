import LivePush
#if canImport(Glibc)
import Glibc
#endif

/// A one-line progress display on a terminal: media pushed / duration, bitrate, fps, ETA.
struct ProgressBar {
    let width = 30

    func render(_ s: PushStats, loops: PushConfig.Looping) -> String {
        let passes: Int64 = if case .times(let n) = loops { Int64(n) } else { 0 }
        let total = passes > 0 ? s.sourceDuration * passes : 0
        var line = ""
        if total > 0 {
            let fraction = min(1, Double(s.mediaTimeSent) / Double(total))
            let filled = Int(fraction * Double(width))
            line += "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
            line += "\(EventFormatter.clock(s.mediaTimeSent))/\(EventFormatter.clock(total)) "
            let elapsed = Double(s.elapsed.nanosecondsValue) / 1e9
            if fraction > 0.01, elapsed > 0 {
                let eta = elapsed / fraction - elapsed
                line += "ETA \(EventFormatter.clock(Int64(eta * 1_000_000))) "
            }
        } else {
            line += "\(EventFormatter.clock(s.mediaTimeSent)) "
        }
        line += "\(s.bitrate / 1000) kbps \(String(format1: s.fps)) fps"
        if s.droppedFrames.total > 0 { line += " dropped \(s.droppedFrames.total)" }
        return line
    }

    static var isTerminal: Bool { isatty(STDERR_FILENO) != 0 }
}
