import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

extension PlayoutSchedule {
    /// Largest schedule file read: a schedule is kilobytes, and a device would never end.
    public static let maxFileBytes = 4 << 20
    /// Largest time in seconds a schedule may name (about 31 years): every time is later turned
    /// into micro- or nanoseconds in an Int64, which a larger one (say 1e300) would overflow.
    public static let maxSeconds: Double = 1_000_000_000

    /// Reads a schedule file: a regular file of at most ``maxFileBytes``, its relative sources
    /// resolved against its directory.
    public init(contentsOfFile path: String) throws(LivePushError) {
        guard MediaRoot.fileType(path, followingLinks: true) == S_IFREG else {
            throw LivePushError(.scheduleInvalid, "\(path) is not a readable regular file")
        }
        guard let bytes = LocalFile.read(path, upTo: Self.maxFileBytes + 1) else {
            throw LivePushError(.scheduleInvalid, "\(path) cannot be read")
        }
        let data = Data(bytes)
        guard data.count <= Self.maxFileBytes else {
            throw LivePushError(.scheduleInvalid, "\(path) is larger than \(Self.maxFileBytes) bytes")
        }
        try self.init(json: data, relativeTo: URL(fileURLWithPath: path).deletingLastPathComponent().path)
    }

    /// Whether `seconds` is a time a schedule or blackout may name: finite, from 0 (or more than
    /// 0) to ``maxSeconds``.
    static func isTime(_ seconds: Double, positive: Bool = false) -> Bool {
        seconds.isFinite && (positive ? seconds > 0 : seconds >= 0) && seconds <= maxSeconds
    }

    /// A number of seconds from the JSON (see ``isTime(_:positive:)``).
    static func seconds(_ value: JSONField?, _ id: String, _ field: String, positive: Bool = false) throws(LivePushError) -> Double {
        guard case .number(let seconds) = value else { throw refuse(id, field, "is missing or not a number of seconds") }
        guard isTime(seconds, positive: positive) else {
            throw refuse(id, field, "must be \(positive ? "more than 0" : "0 or more") and at most \(Int(maxSeconds)) seconds")
        }
        return seconds
    }

    /// Reads the JSON form (see ``PlayoutSchedule``) and validates it. Relative `source` paths
    /// are resolved against `directory` (the schedule file's). Every refusal is
    /// `scheduleInvalid` and names the entry and the field.
    public init(json: Data, relativeTo directory: String? = nil) throws(LivePushError) {
        let refuse = Self.refuse
        guard let decoded = try? JSONDecoder().decode(JSONField.self, from: json), case .object(let root) = decoded else {
            throw LivePushError(.scheduleInvalid, "not a JSON object")
        }
        var loop = Loop.times(1)
        switch root["loop"] {
        case nil: break
        case .string("forever"): loop = .forever
        case .number(let n) where n == n.rounded() && abs(n) < 1e9: loop = .times(Int(n))
        default: throw refuse("schedule", "loop", "must be a whole number or \"forever\"")
        }
        func clip(_ object: [String: JSONField], index: Int, list: String) throws(LivePushError) -> Clip {
            try Self.clip(object, name: "\(list)[\(index)]", relativeTo: directory)
        }
        func objects(_ key: String, required: Bool) throws(LivePushError) -> [[String: JSONField]] {
            guard let value = root[key] else {
                if required { throw refuse("schedule", key, "is missing") }
                return []
            }
            guard case .array(let items) = value else { throw refuse("schedule", key, "must be a list of objects") }
            var list: [[String: JSONField]] = []
            for item in items {
                guard case .object(let object) = item else { throw refuse("schedule", key, "must be a list of objects") }
                list.append(object)
            }
            return list
        }

        var content: [Clip] = []
        for (index, object) in try objects("content", required: true).enumerated() {
            try Self.refuseUnknownFields(object, known: Self.clipFields, name: "content[\(index)]")
            content.append(try clip(object, index: index, list: "content"))
        }
        var ads: [Ad] = []
        for (index, object) in try objects("ads", required: false).enumerated() {
            try Self.refuseUnknownFields(object, known: Self.clipFields + Self.adFields, name: "ads[\(index)]")
            let base = try clip(object, index: index, list: "ads")
            guard case .string(let typeName) = object["type"], let type = AdType(rawValue: typeName) else {
                throw refuse(base.id, "type", "must be one of " + AdType.allCases.map(\.rawValue).joined(separator: ", "))
            }
            var ad = Ad(clip: base, type: type)
            if object["at"] != nil { ad.at = try Self.seconds(object["at"], base.id, "at") }
            switch object["appendTo"] {
            case nil: break
            case .string(let parent): ad.appendTo = parent
            default: throw refuse(base.id, "appendTo", "must be an ad's id")
            }
            switch object["deleteAfterPlay"] {
            case nil: break
            case .bool(let once): ad.deleteAfterPlay = once
            default: throw refuse(base.id, "deleteAfterPlay", "must be true or false")
            }
            ads.append(ad)
        }
        var blackouts: [BlackoutWindow] = []
        for (index, object) in try objects("blackouts", required: false).enumerated() {
            blackouts.append(try Self.blackout(object, name: "blackouts[\(index)]"))
        }
        self.init(loop: loop, content: content, ads: ads, blackouts: blackouts)
        try validate()
    }

    /// The fields a content entry (and a clip sent to a running channel) may have. Any other is
    /// refused (`scheduleFieldUnknown`): a misspelt field would otherwise be silently ignored.
    static let clipFields = [
        "id", "source", "in", "out",
        "title", "description", "category", "episode",
        "overlays",
    ]
    /// The fields an ad may have besides a clip's.
    static let adFields = ["type", "at", "appendTo", "deleteAfterPlay"]

    static func refuse(_ id: String, _ field: String, _ why: String) -> LivePushError {
        LivePushError(.scheduleInvalid, "entry \"\(id)\", field \"\(field)\": \(why)")
    }

    /// A blackout object: `at` (seconds of the stream) or `start` (ISO 8601), and `duration`.
    static func blackout(_ object: [String: JSONField], name: String) throws(LivePushError) -> BlackoutWindow {
        if let unknown = object.keys.sorted().first(where: { !["at", "start", "duration"].contains($0) }) {
            throw refuse(name, unknown, "is not a blackout field (at, start, duration)")
        }
        let duration = Duration.milliseconds(Int64(try seconds(object["duration"], name, "duration", positive: true) * 1000))
        switch (object["at"], object["start"]) {
        case (.some(let at), nil):
            return BlackoutWindow(start: .position(.milliseconds(Int64(try seconds(at, name, "at") * 1000))), duration: duration)
        case (nil, .string(let text)):
            guard let date = try? Date(text, strategy: .iso8601) else { throw refuse(name, "start", "is not an ISO 8601 time") }
            return BlackoutWindow(start: .wallClock(date), duration: duration)
        default:
            throw refuse(name, "at", "give either at (seconds, 0 or more) or start (an ISO 8601 time)")
        }
    }

    /// A clip object: `id`, `source` (relative to `directory`, or a live feed's URL), `in` and
    /// `out` seconds (a live entry lasts out − in).
    static func clip(_ object: [String: JSONField], name: String, relativeTo directory: String?) throws(LivePushError) -> Clip {
        guard case .string(let id) = object["id"] else { throw refuse(name, "id", "is missing or not a string") }
        guard case .string(var source) = object["source"] else { throw refuse(id, "source", "is missing or not a string") }
        if let directory, !source.hasPrefix("/"), FFInputPolicy.liveProtocols(for: source) == nil { source = URL(fileURLWithPath: directory).appendingPathComponent(source).path }
        var clip = Clip(id: id, source: source, in: try seconds(object["in"], id, "in"), out: try seconds(object["out"], id, "out"))
        guard clip.inPoint >= 0, clip.inPoint < clip.outPoint else { throw refuse(id, "out", "must be after in (\(clip.inPoint))") }
        let name = ProgrammeInfo.maxNameLength
        clip.programme = ProgrammeInfo(title: try text(object, "title", id, upTo: name),
                                       description: try text(object, "description", id, upTo: ProgrammeInfo.maxDescriptionLength),
                                       category: try text(object, "category", id, upTo: name),
                                       episode: try text(object, "episode", id, upTo: name))
        if let overlays = object["overlays"] { clip.overlays = try Overlay.entryOverlays(overlays, entry: id, relativeTo: directory) }
        return clip
    }

    /// An optional text field of an entry: a string of at most `limit` characters.
    private static func text(_ object: [String: JSONField], _ field: String, _ id: String, upTo limit: Int) throws(LivePushError) -> String? {
        switch object[field] {
        case nil: return nil
        case .string(let text) where text.count <= limit: return text
        case .string: throw refuse(id, field, "is longer than \(limit) characters")
        default: throw refuse(id, field, "must be a string")
        }
    }

    /// Refuses the first field of `object` (in sorted order) that is not in `known`, naming the
    /// entry (its id, else its place in the list).
    static func refuseUnknownFields(_ object: [String: JSONField], known: [String], name: String) throws(LivePushError) {
        guard let unknown = object.keys.sorted().first(where: { !known.contains($0) }) else { return }
        let id: String = if case .string(let id) = object["id"] { id } else { name }
        throw LivePushError(.scheduleFieldUnknown, "entry \"\(id)\", field \"\(unknown)\": is not a schedule entry field (known: "
                            + known.joined(separator: ", ") + ")")
    }
}

extension PlayoutSchedule.Clip {
    /// One clip in the schedule's JSON form (`{"id", "source", "in", "out"}`), e.g. for
    /// schedule-now; `scheduleInvalid` names the field that is wrong.
    public init(json: Data, relativeTo directory: String? = nil) throws(LivePushError) {
        guard let decoded = try? JSONDecoder().decode(JSONField.self, from: json), case .object(let object) = decoded else {
            throw LivePushError(.scheduleInvalid, "a clip must be a JSON object with id, source, in and out")
        }
        try PlayoutSchedule.refuseUnknownFields(object, known: PlayoutSchedule.clipFields, name: "clip")
        self = try PlayoutSchedule.clip(object, name: "clip", relativeTo: directory)
    }
}

/// Any JSON value, decoded strictly (a number is never a boolean, nor the other way round).
package enum JSONField: Decodable, Equatable {
    /// JSON `null`.
    case null
    /// A JSON boolean.
    case bool(Bool)
    /// A JSON number.
    case number(Double)
    /// A JSON string.
    case string(String)
    /// A JSON array.
    case array([JSONField])
    /// A JSON object.
    case object([String: JSONField])

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Double.self) { self = .number(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([JSONField].self) { self = .array(value) }
        else { self = .object(try container.decode([String: JSONField].self)) }
    }
}
