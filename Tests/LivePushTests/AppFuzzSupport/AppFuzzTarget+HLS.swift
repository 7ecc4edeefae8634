import Foundation
@testable import LivePush
import LivePushWire

/// The HLS input's readers of an origin's text: the playlist (``HLSPlaylistParser``), what the
/// input does with it across reloads (``HLSPlaylistTracker``) and its cue tags made sections
/// (``HLSCueMapper``). Nothing here opens a socket.
extension AppFuzzTarget {
    // MARK: hls-playlist

    /// The playlist is read, or refused with a message of at most 200 characters and no control
    /// character; what is read holds finite durations up to an hour, URIs of visible ASCII, at
    /// most 10,000 segments numbered in a row; loaded twice by the tracker (as a reload), it
    /// gives no segment twice; each cue tag makes one section, and a CUE-OUT or CUE-IN one that parses.
    static func checkHLSPlaylist(_ bytes: [UInt8]) -> String? {
        let playlist: HLSPlaylist
        do throws(HLSPlaylistParser.Failure) {
            playlist = try HLSPlaylistParser.parse(bytes)
        } catch {
            let text = error.description
            if text.count > 200 { return "a refusal of \(text.count) characters" }
            if text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
                return "a refusal with a control character"
            }
            return nil
        }
        if playlist.segments.count > 10_000 { return "more than 10,000 segments" }
        for (index, segment) in playlist.segments.enumerated() {
            if !segment.duration.isFinite || !(0...3600).contains(segment.duration) { return "a duration of \(segment.duration)" }
            if segment.sequence != playlist.mediaSequence + index { return "segments not numbered in a row" }
            if segment.uri.utf8.contains(where: { !(0x21...0x7E).contains($0) }) { return "a URI outside visible ASCII" }
        }
        for variant in playlist.variants where variant.uri.utf8.contains(where: { !(0x21...0x7E).contains($0) }) {
            return "a variant URI outside visible ASCII"
        }
        var tracker = HLSPlaylistTracker()
        let first = tracker.update(playlist, loadBegan: 0)
        let again = tracker.update(playlist, loadBegan: 1_000_000)
        if !again.segments.isEmpty || again.changed { return "the same playlist again gave \(again.segments.count) segments" }
        if !playlist.ended, first.reloadAt == nil { return "a live playlist with no reload" }
        var mapper = HLSCueMapper()
        for segment in playlist.segments {
            let sections = mapper.sections(for: segment.cues)
            if sections.count != segment.cues.count { return "\(segment.cues.count) tags made \(sections.count) sections" }
            for (tag, section) in zip(segment.cues, sections) where tag.family == .cueOutIn {
                if (try? SpliceInfoSection(parsing: section)) == nil { return "a CUE-OUT/IN made a section that does not parse" }
            }
        }
        return nil
    }
}
