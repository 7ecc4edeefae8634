import FoundationEssentials

/// The configuration of `livepush channels CONFIG.json`:
/// ```json
/// {"control": "127.0.0.1:8089", "token": "…",
///  "channels": [{"id": "c0", "input": "show.mp4", "loop": "forever", "outputs": ["rtmp://host/app/s0"]},
///               {"id": "c1", "playout": "schedule.json", "outputs": ["rtmp://host/app/s1", "rtmp://backup/app/s1"],
///                "record": "c1.flv", "alternate": "slate.mp4", "autostart": true}]}
/// ```
/// `"apiInputs"` names the network inputs control-API callers may give (``APIInputPolicy``;
/// none by default).
///
/// A bad configuration is refused before anything starts: `channelConfigInvalid`, naming the
/// channel and the field.
///
/// Every file path (input, playout, alternate, record; and those the control API is given)
/// resolves inside the media root: the configuration's directory unless
/// `"mediaRoot"` names another (relative to the configuration's directory, or absolute).
public struct ChannelsConfig: Sendable, Equatable {
    /// `HOST:PORT` of the control API, metrics and health endpoints (127.0.0.1 unless told).
    public var control: String?
    /// A bearer token the control API asks for (metrics and health stay open); nil: none.
    public var token: String?
    /// The channels to run.
    public var channels: [ChannelSpec]
    /// Where every path of the configuration and of the control API must lie; nil for a
    /// configuration made in code.
    package var mediaRoot: MediaRoot?
    /// The network inputs callers of the control API may give (`"apiInputs"`); by default none:
    /// files under the media root only. The configuration's own channels are not judged by it.
    public var apiInputs: APIInputPolicy

    /// Creates a configuration in code (its paths are taken as they are: no media root).
    public init(control: String? = nil, token: String? = nil, channels: [ChannelSpec],
                apiInputs: APIInputPolicy = APIInputPolicy()) {
        self.init(control: control, token: token, channels: channels, mediaRoot: nil, apiInputs: apiInputs)
    }

    package init(control: String?, token: String?, channels: [ChannelSpec], mediaRoot: MediaRoot?,
                 apiInputs: APIInputPolicy) {
        self.control = control
        self.token = token
        self.channels = channels
        self.mediaRoot = mediaRoot
        self.apiInputs = apiInputs
    }

    static func refuse(_ channel: String, _ field: String, _ why: String) -> LivePushError {
        LivePushError(.channelConfigInvalid, "channel \"\(channel)\", field \"\(field)\": \(why)")
    }

    /// Reads and checks the JSON form. `directory` is the configuration's: the media root, unless
    /// the configuration names one (current directory when nil).
    public init(json: Data, relativeTo directory: String? = nil) throws(LivePushError) {
        guard let decoded = try? JSONDecoder().decode(JSONField.self, from: json), case .object(let root) = decoded else {
            throw LivePushError(.channelConfigInvalid, "not a JSON object")
        }
        let fields = ["control", "token", "channels", "mediaRoot", "apiInputs"]
        if let unknown = root.keys.sorted().first(where: { !fields.contains($0) }) {
            throw Self.refuse("config", unknown, "is not a field (\(fields.joined(separator: ", ")))")
        }
        let base = directory ?? FileManager.default.currentDirectoryPath
        var rootPath = base
        switch root["mediaRoot"] {
        case nil: break
        case .string(let path) where !path.isEmpty: rootPath = path.hasPrefix("/") ? path : base + "/" + path
        default: throw Self.refuse("config", "mediaRoot", "must be a directory's path")
        }
        let mediaRoot: MediaRoot
        do throws(LivePushError) {
            mediaRoot = try MediaRoot(rootPath)
        } catch {
            throw Self.refuse("config", "mediaRoot", error.detail ?? error.message)
        }
        self.mediaRoot = mediaRoot
        apiInputs = try root["apiInputs"].map { field throws(LivePushError) in try APIInputPolicy(json: field) } ?? APIInputPolicy()
        switch root["control"] {
        case nil: control = nil
        case .string(let address): control = address
        default: throw Self.refuse("config", "control", "must be \"HOST:PORT\"")
        }
        switch root["token"] {
        case nil: token = nil
        case .string(let value) where !value.isEmpty: token = value
        default: throw Self.refuse("config", "token", "must be a non-empty string")
        }
        guard case .array(let items) = root["channels"] else { throw Self.refuse("config", "channels", "must be a list of channels") }
        var channels: [ChannelSpec] = []
        for (index, item) in items.enumerated() {
            guard case .object(let object) = item else { throw Self.refuse("channels[\(index)]", "channels", "must be an object") }
            channels.append(try ChannelSpec(json: object, name: "channels[\(index)]", root: mediaRoot))
        }
        self.channels = channels
        try validate()
    }

    /// Duplicate ids, the control address; each channel's own checks were made when read.
    public func validate() throws(LivePushError) {
        if let control, Self.hostAndPort(control) == nil {
            throw Self.refuse("config", "control", "\"\(control)\" is not HOST:PORT")
        }
        var seen = Set<String>()
        for channel in channels {
            guard seen.insert(channel.id).inserted else { throw Self.refuse(channel.id, "id", "is used by two channels") }
        }
    }

    /// `HOST:PORT` split, the port 0–65535.
    public static func hostAndPort(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65_535).contains(port) else {
            return nil
        }
        let host = String(text[..<colon])
        return host.isEmpty ? nil : (host, port)
    }
}

extension ChannelSpec {
    /// One channel object (see ``ChannelsConfig``); every refusal names the channel and field.
    /// Its paths resolve inside `root`.
    package init(json object: [String: JSONField], name: String, root: MediaRoot) throws(LivePushError) {
        let refuse = ChannelsConfig.refuse
        guard case .string(let id) = object["id"], ChannelSpec.isValidID(id) else {
            throw refuse(name, "id", "is missing or not 1-64 characters of A-Z a-z 0-9 _ . -")
        }
        let known = ["id", "input", "playout", "loop", "outputs", "record", "alternate", "autostart", "backup", "inputLoss",
                     "inputTimeout", "loudness"]
            + ["epg", "asRun"]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw refuse(id, unknown, "is not a channel field (\(known.joined(separator: ", ")))")
        }
        func text(_ field: String) throws(LivePushError) -> String? {
            switch object[field] {
            case nil: return nil
            case .string(let value) where !value.isEmpty: return value
            default: throw refuse(id, field, "must be a path")
            }
        }
        func readable(_ field: String) throws(LivePushError) -> String? {
            guard let value = try text(field) else { return nil }
            do throws(LivePushError) {
                return try root.fileToRead(value)
            } catch {
                throw refuse(id, field, error.detail ?? error.message)
            }
        }
        var loop = PushConfig.Looping.once
        switch object["loop"] {
        case nil: break
        case .string("forever"): loop = .forever
        case .number(let n) where n == n.rounded() && n >= 1 && n < 1e9: loop = .times(Int(n))
        default: throw refuse(id, "loop", "must be a whole number of passes (1 or more) or \"forever\"")
        }
        let liveURL = try text("input").flatMap { FFInputPolicy.liveProtocols(for: $0) != nil ? $0 : nil }
        switch (liveURL == nil ? try readable("input") : liveURL, try readable("playout")) {
        case (let url?, nil) where liveURL != nil:
            if object["loop"] != nil { throw refuse(id, "loop", "a live input is not looped") }
            source = .live(url: url)
        case (let input?, nil):
            source = .file(path: input, loop: loop)
        case (nil, let schedule?):
            if object["loop"] != nil { throw refuse(id, "loop", "belongs to the schedule of a playout channel") }
            do throws(LivePushError) {
                _ = try PlayoutSchedule(contentsOfFile: schedule)
            } catch {
                throw refuse(id, "playout", error.detail ?? error.message)
            }
            source = .playout(schedulePath: schedule)
        case (nil, nil): throw refuse(id, "input", "is missing (give input or playout)")
        case (.some, .some): throw refuse(id, "playout", "give input or playout, not both")
        }
        var urls: [String] = []
        var video: [Int: [VideoRendition]] = [:]
        switch object["outputs"] {
        case nil: break
        case .array(let items):
            for (index, item) in items.enumerated() {
                let output = try Self.output(item, channel: id, field: "outputs[\(index)]")
                urls.append(output.url)
                video[index] = output.video
            }
        default: throw refuse(id, "outputs", "must be a list of rtmp:// URLs or output objects")
        }
        outputs = urls
        outputVideoLadders = video
        if let value = try text("record") {
            do throws(LivePushError) {
                record = try root.fileToWrite(value)
            } catch {
                throw refuse(id, "record", error.detail ?? error.message)
            }
        } else {
            record = nil
        }
        alternate = try readable("alternate")
        // A playout channel's paperwork: its programme guide and as-run log, files inside the root.
        for field in ["epg", "asRun"] {
            guard let value = try text(field) else { continue }
            guard case .playout = source else { throw refuse(id, field, "belongs to a playout channel") }
            do throws(LivePushError) {
                let path = try root.fileToWrite(value)
                if field == "epg" { epg = path } else { asRun = path }
            } catch {
                throw refuse(id, field, error.detail ?? error.message)
            }
        }
        if liveURL == nil, let field = ["backup", "inputLoss", "inputTimeout"].first(where: { object[$0] != nil }) {
            throw refuse(id, field, "belongs to a live input (an rtmp://, srt://, http(s)://, udp:// or rtp:// input)")
        }
        liveInput.backup = try readable("backup")
        switch object["inputLoss"] {
        case nil: break
        case .string(let value) where InputLossFill(rawValue: value) != nil: liveInput.loss = InputLossFill(rawValue: value)!
        default: throw refuse(id, "inputLoss", "must be \"repeat\", \"black\" or \"slate\"")
        }
        switch object["inputTimeout"] {
        case nil: break
        case .number(let seconds) where seconds > 0 && seconds <= 3600: liveInput.timeout = .milliseconds(Int64(seconds * 1000))
        default: throw refuse(id, "inputTimeout", "must be a number of seconds, more than 0 and at most 3600")
        }
        loudness = try Self.loudness(object["loudness"], channel: id)
        switch object["autostart"] {
        case nil: autostart = true
        case .bool(let value): autostart = value
        default: throw refuse(id, "autostart", "must be true or false")
        }
        self.id = id
        // A recording goes beside the outputs, not instead of them.
        guard !outputs.isEmpty else { throw refuse(id, "outputs", "is missing or empty: give at least one rtmp:// URL") }
    }

    /// `"loudness"`: a target in LUFS (`-23`), or `{"target": -23, "truePeak": -1}`.
    static func loudness(_ field: JSONField?, channel id: String) throws(LivePushError) -> LoudnessTarget? {
        let refuse = ChannelsConfig.refuse
        var target: Double, truePeak = -1.0
        switch field {
        case nil: return nil
        case .number(let value): target = value
        case .object(let fields):
            if let unknown = fields.keys.sorted().first(where: { !["target", "truePeak"].contains($0) }) {
                throw refuse(id, "loudness.\(unknown)", "is not a loudness field (target, truePeak)")
            }
            guard case .number(let value) = fields["target"] else { throw refuse(id, "loudness.target", "must be a number of LUFS") }
            target = value
            switch fields["truePeak"] {
            case nil: break
            case .number(let value): truePeak = value
            default: throw refuse(id, "loudness.truePeak", "must be a number of dBTP")
            }
        default: throw refuse(id, "loudness", "must be a target in LUFS (-23) or {\"target\": -23, \"truePeak\": -1}")
        }
        do throws(LivePushError) {
            return try LoudnessTarget(integrated: target, truePeak: truePeak)
        } catch {
            throw LivePushError(.loudnessSettingsInvalid, "channel \"\(id)\", field \"loudness\": \(error.detail ?? error.message)")
        }
    }

    /// An output: an rtmp:// URL, or `{"url": URL, "video": {"size": "640x360", "bitrate": 800}}`
    /// (bitrate in kbit/s) for a rendition of its own, or `"video": [{…}, {…}]` for a ladder (an
    /// output that carries one: ``OutputKind/carriesLadder``).
    static func output(_ item: JSONField, channel id: String, field: String) throws(LivePushError) -> (url: String, video: [VideoRendition]?) {
        let refuse = ChannelsConfig.refuse
        let url: String
        var ladder: [VideoRendition]?
        switch item {
        case .string(let text):
            url = text
        case .object(let fields):
            if let unknown = fields.keys.sorted().first(where: { !["url", "video"].contains($0) }) {
                throw refuse(id, "\(field).\(unknown)", "is not an output field (url, video)")
            }
            guard case .string(let text) = fields["url"] else { throw refuse(id, "\(field).url", "must be an rtmp://, rtmps:// or srt:// URL") }
            url = text
            // One rendition, or a ladder: a list of them, one variant each.
            switch fields["video"] {
            case nil: break
            case .array(let items):
                guard !items.isEmpty else { throw refuse(id, "\(field).video", "is an empty ladder") }
                var list: [VideoRendition] = []
                for (position, item) in items.enumerated() {
                    let candidate = try rendition(item, channel: id, field: "\(field).video[\(position)]")
                    guard !list.contains(candidate) else { throw refuse(id, "\(field).video[\(position)]", "is in the ladder twice") }
                    list.append(candidate)
                }
                ladder = list
            case let item?:
                ladder = [try rendition(item, channel: id, field: "\(field).video")]
            }
        default:
            throw refuse(id, field, "must be an rtmp:// URL or an output object")
        }
        let output: PushURL
        do throws(LivePushError) {
            output = try PushURL.checkChannelOutput(url)
        } catch {
            throw refuse(id, field, error.message)
        }
        if let ladder, ladder.count > 1, case let kind = OutputKind(output), !kind.carriesLadder {
            throw refuse(id, "\(field).video", "has \(ladder.count) renditions: \(kind.ladderRefusal)")
        }
        return (url, ladder)
    }

    /// An output object's `"video"` (or one rung of its ladder): `{"size": "WxH", "bitrate": KBPS, "codec": …}`.
    private static func rendition(_ item: JSONField, channel id: String, field: String) throws(LivePushError) -> VideoRendition {
        let refuse = ChannelsConfig.refuse
        let shape = "must be {\"size\": \"WxH\", \"bitrate\": KBPS, \"codec\": \"h264|hevc|av1\" (optional)}, or a list of them (a ladder)"
        guard case .object(let video) = item, video.keys.allSatisfy({ ["size", "bitrate", "codec"].contains($0) }),
              case .string(let sizeText) = video["size"], let size = VideoSize(sizeText), case .number(let kbps) = video["bitrate"],
              kbps == kbps.rounded(), abs(kbps) < 1e9 else {
            throw refuse(id, field, shape)
        }
        var codec = VideoCodec.h264
        if let value = video["codec"] {
            guard case .string(let name) = value, let named = VideoCodec(rawValue: name), named != .vp9 else {
                throw refuse(id, field, shape)
            }
            codec = named
        }
        let candidate = VideoRendition(width: size.width, height: size.height, bitrateKbps: Int(kbps), codec: codec)
        do throws(LivePushError) {
            try candidate.validate()
        } catch {
            throw refuse(id, field, error.message)
        }
        return candidate
    }
}
