/// The programme guide of a playout channel as an XMLTV document (the DTD of Debian's
/// `xmltv-util`, `/usr/share/xmltv/xmltv.dtd`), pure: the schedule and the channel's start in,
/// the text out.
///
/// One programme per content clip as it plays: from its first frame to its last, the
/// midroll breaks inside it included (a programme's slot holds its breaks, as a broadcaster's
/// does). Ads are not programmes: prerolls, postrolls and breaks between two clips are gaps
/// in the guide. The guide is the plan from the channel's start (the original schedule and
/// the clips appended since); what was scheduled now or skipped shows in the as-run log.
package enum XMLTVGuide {
    /// A programme: its slot (µs since 1970) and what it is.
    package struct Programme: Sendable, Equatable {
        package var id: String
        package var start: Int64
        package var stop: Int64
        package var title: String
        package var info: ProgrammeInfo
    }

    /// The most programmes a guide lists (a schedule looped forever is listed this far).
    package static let maxProgrammes = 2000
    /// How far ahead a guide reaches, µs (a week).
    package static let horizon: Int64 = 7 * 86_400 * 1_000_000
    /// The most timeline entries walked to make a guide (a schedule of tiny clips stays cheap).
    static let maxEntries = 50_000

    /// The programmes of `schedule` for a channel whose output time 0 is `start` (µs since 1970).
    package static func programmes(of schedule: PlayoutSchedule, from start: Int64) -> [Programme] {
        // The planned schedule is the one the channel's own timeline was made from, its appended
        // clips each accepted by that timeline, so this cannot fail; no programmes if it did.
        guard var timeline = try? PlayoutTimeline(schedule: schedule) else { return [] }
        var programmes: [Programme] = []
        var open: (programme: Programme, out: Double)?
        var time = start
        for _ in 0..<maxEntries {
            guard let entry = timeline.next(), time - start < horizon else { break }
            let end = time + MediaTime(seconds: entry.duration).microseconds
            defer { time = end }
            guard entry.kind == .content else { continue }
            // The same clip going on after a break: the programme goes on.
            if var current = open, current.programme.id == entry.id, abs(current.out - entry.inPoint) < 1e-6 {
                current.programme.stop = end
                current.out = entry.outPoint
                open = current
                continue
            }
            if let current = open {
                programmes.append(current.programme)
                if programmes.count == maxProgrammes { return programmes }
            }
            open = (Programme(id: entry.id, start: time, stop: end, title: entry.title, info: entry.programme), entry.outPoint)
        }
        if let current = open { programmes.append(current.programme) }
        return programmes
    }

    /// The XMLTV document: one channel, its programmes.
    package static func document(channelID: String, displayName: String, programmes: [Programme]) -> String {
        var xml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE tv SYSTEM "xmltv.dtd">
        <tv generator-info-name="LivePush">
          <channel id="\(escape(channelID))">
            <display-name>\(escape(displayName))</display-name>
          </channel>

        """
        for programme in programmes {
            xml += "  <programme start=\"\(time(programme.start))\" stop=\"\(time(programme.stop))\" channel=\"\(escape(channelID))\">\n"
            xml += "    <title>\(escape(programme.title))</title>\n"
            if let text = programme.info.description, !text.isEmpty { xml += "    <desc>\(escape(text))</desc>\n" }
            if let text = programme.info.category, !text.isEmpty { xml += "    <category>\(escape(text))</category>\n" }
            if let text = programme.info.episode, !text.isEmpty {
                xml += "    <episode-num system=\"onscreen\">\(escape(text))</episode-num>\n"
            }
            xml += "  </programme>\n"
        }
        return xml + "</tv>\n"
    }

    /// XMLTV's time: `20261127180000 +0000` (UTC, whole seconds, rounded down).
    package static func time(_ microseconds: Int64) -> String {
        let seconds = microseconds >= 0 ? microseconds / 1_000_000 : (microseconds - 999_999) / 1_000_000
        let text = UTCTime(unixSeconds: seconds).description  // `2026-11-22 05:00:00 UTC`
        return text.prefix(19).filter { $0.isNumber } + " +0000"
    }

    /// `text` as XML character data or an attribute value: the five special characters as
    /// entities, and the characters XML 1.0 does not allow (most control characters) left out.
    package static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            case _ where scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF: continue
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
