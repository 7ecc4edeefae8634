/// One item that actually aired, for the as-run log (``PlayoutEvent/aired(_:)``): what it was,
/// when its first frame went out and for how long, and why it ended. Times are the output
/// clock's: the channel's start plus the media position of the item's first frame, so they
/// match the stream a viewer received, not when an event was handled.
public struct AsRunRecord: Sendable, Equatable {
    /// What aired.
    public enum Kind: String, Sendable, Equatable {
        /// A content clip (or the part of one that aired between two breaks).
        case content
        /// An ad that opened a break.
        case ad
        /// An ad that followed another in a break.
        case pod
        /// The slate, in place of an entry that could not be played (or a live entry's lost feed).
        case slate
        /// A live entry's backup, in place of its lost feed.
        case backup
        /// A blackout filled with black and silence.
        case blackout
        /// A blackout filled with the alternate content.
        case alternate
    }

    /// Why it ended.
    public enum Ending: String, Sendable, Equatable {
        /// It played to its end.
        case completed
        /// A skip ended it.
        case skipped
        /// A blackout cut it (what aired after the blackout is a line of its own).
        case cutByBlackout
        /// It failed mid-way (a live entry: its feed was lost); the slate took its place.
        case failed
    }

    /// The entry's id (a slate's: the entry it stood in for; a blackout's: its event id).
    public var id: String
    /// What aired.
    public var kind: Kind
    /// The entry's title (else its file name).
    public var title: String
    /// The file or URL that played.
    public var source: String
    /// When its first frame went out: microseconds since 1970-01-01 00:00:00 UTC.
    public var start: Int64
    /// How long it aired, microseconds.
    public var duration: Int64
    /// The SCTE-35 splice_event_id of the break it belongs to, if any.
    public var eventID: UInt32?
    /// Why it ended.
    public var ending: Ending

    /// Creates a record.
    public init(id: String, kind: Kind, title: String, source: String, start: Int64, duration: Int64,
                eventID: UInt32? = nil, ending: Ending) {
        self.id = id
        self.kind = kind
        self.title = title
        self.source = source
        self.start = start
        self.duration = duration
        self.eventID = eventID
        self.ending = ending
    }

    /// The record as one line of JSON (no newline):
    /// `{"id","kind","title","source","start":"2026-11-27T18:00:00.040Z","duration":4.000,"eventId"?,"ended"}`.
    public var jsonLine: String {
        var fields = [("id", JSONText.string(id)), ("kind", JSONText.string(kind.rawValue)), ("title", JSONText.string(title)),
                      ("source", JSONText.string(source)), ("start", JSONText.string(Self.iso8601(start))),
                      ("duration", Self.seconds(duration))]
        if let eventID { fields.append(("eventId", String(eventID))) }
        fields.append(("ended", JSONText.string(ending.rawValue)))
        return "{" + fields.map { JSONText.string($0.0) + ":" + $0.1 }.joined(separator: ",") + "}"
    }

    /// `2026-11-27T18:00:00.040Z` for microseconds since 1970 (UTC, milliseconds, rounded down).
    static func iso8601(_ microseconds: Int64) -> String {
        let milliseconds = microseconds >= 0 ? microseconds / 1000 : (microseconds - 999) / 1000
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let time = UTCTime(unixSeconds: seconds)
        let text = time.description  // `2026-11-22 05:00:00 UTC`
        let fraction = String(milliseconds - seconds * 1000)
        let date = text.prefix(10), clock = text.dropFirst(11).prefix(8)
        return "\(date)T\(clock).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)Z"
    }

    /// Seconds with milliseconds, as a JSON number: `4.000`.
    static func seconds(_ microseconds: Int64) -> String {
        let milliseconds = max(0, microseconds) / 1000
        let fraction = String(milliseconds % 1000)
        return "\(milliseconds / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }
}
