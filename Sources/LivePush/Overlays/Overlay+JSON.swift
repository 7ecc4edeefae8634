import FoundationEssentials

extension Overlay {
    /// The fields of an overlay's JSON form.
    static let jsonFields = ["id", "text", "image", "clock", "x", "y", "size", "color", "background", "opacity", "fadeIn", "fadeOut"]

    /// Reads an overlay's JSON form (`{"id", "text" | "image" | "clock", "x", "y", "size",
    /// "color", "background", "opacity", "fadeIn", "fadeOut"}`; fades in seconds, colours
    /// `"#RRGGBB[AA]"`, `"clock": "wall" | "media"`). With `base`, the object is a patch: what it
    /// names replaces the base's (its id, if given, must be the base's). `image` turns an image's
    /// path as given into the one to read (relative to a schedule, inside a media root).
    /// Throws `overlayInvalid` naming the field; unknown fields are refused.
    package static func decode(_ object: [String: JSONField], base: Overlay? = nil,
                               image: (String) throws(LivePushError) -> String) throws(LivePushError) -> Overlay {
        let name: String
        switch object["id"] {
        case .string(let id): name = id
        case nil where base != nil: name = base!.id
        default: throw LivePushError(.overlayInvalid, "field \"id\": is missing or not a string")
        }
        guard Overlay.isValidID(name) else {
            throw LivePushError(.overlayInvalid, "field \"id\": give 1 to \(Overlay.maxIDLength) characters of A-Z, a-z, 0-9, _ and -")
        }
        func refuse(_ field: String, _ why: String) -> LivePushError {
            LivePushError(.overlayInvalid, "overlay \"\(name)\", field \"\(field)\": \(why)")
        }
        if let base, name != base.id { throw refuse("id", "a change cannot rename an overlay (\"\(base.id)\")") }
        if let unknown = object.keys.sorted().first(where: { !jsonFields.contains($0) }) {
            throw refuse(unknown, "is not an overlay field (\(jsonFields.joined(separator: ", ")))")
        }
        func integer(_ field: String) throws(LivePushError) -> Int? {
            guard let value = object[field] else { return nil }
            guard case .number(let n) = value, n.isFinite, n == n.rounded(), abs(n) <= 1_000_000 else { throw refuse(field, "must be a whole number") }
            return Int(n)
        }
        func seconds(_ field: String) throws(LivePushError) -> Duration? {
            guard let value = object[field] else { return nil }
            guard case .number(let n) = value, n.isFinite, n >= 0, n <= Double(maxFade.components.seconds) else {
                throw refuse(field, "must be 0 to \(maxFade.components.seconds) seconds")
            }
            return .milliseconds(Int64((n * 1000).rounded()))
        }
        func color(_ field: String) throws(LivePushError) -> OverlayColor? {
            guard let value = object[field] else { return nil }
            guard case .string(let text) = value, let color = OverlayColor(hex: text) else { throw refuse(field, "must be \"#RRGGBB\" or \"#RRGGBBAA\"") }
            return color
        }

        let kinds = ["text", "image", "clock"].filter { object[$0] != nil }
        guard kinds.count <= 1 else { throw refuse(kinds[1], "give one of text, image and clock") }
        var content = base?.content
        switch kinds.first {
        case "text":
            guard case .string(let text) = object["text"] else { throw refuse("text", "must be a string") }
            content = .text(text)
        case "image":
            guard case .string(let path) = object["image"], !path.isEmpty, path.utf8.count <= 4096 else {
                throw refuse("image", "must be an image file's path")
            }
            do throws(LivePushError) {
                content = .image(path: try image(path))
            } catch {
                throw LivePushError(error.code, "overlay \"\(name)\", field \"image\": \(error.detail ?? error.message)")
            }
        case "clock":
            guard case .string(let style) = object["clock"], let clock = ClockStyle(rawValue: style) else {
                throw refuse("clock", "must be \"wall\" or \"media\"")
            }
            content = .clock(clock)
        default:
            break
        }
        guard let content else { throw refuse("text", "give one of text, image and clock") }
        guard let x = try integer("x") ?? base?.x else { throw refuse("x", "is missing") }
        guard let y = try integer("y") ?? base?.y else { throw refuse("y", "is missing") }
        var overlay = base ?? Overlay(id: name, content: content, x: x, y: y)
        overlay.content = content
        overlay.x = x
        overlay.y = y
        if object["size"] != nil { overlay.size = try integer("size") }
        if let color = try color("color") { overlay.color = color }
        if let background = try color("background") { overlay.background = background }
        if let value = object["opacity"] {
            guard case .number(let opacity) = value, opacity.isFinite, (0...1).contains(opacity) else { throw refuse("opacity", "must be 0 to 1") }
            overlay.opacity = opacity
        }
        if let fade = try seconds("fadeIn") { overlay.fadeIn = fade }
        if let fade = try seconds("fadeOut") { overlay.fadeOut = fade }
        try overlay.validate()
        return overlay
    }

    /// Reads a JSON body (an object) as ``decode(_:base:image:)`` does.
    package static func decode(json: Data, base: Overlay? = nil,
                               image: (String) throws(LivePushError) -> String) throws(LivePushError) -> Overlay {
        guard let decoded = try? JSONDecoder().decode(JSONField.self, from: json), case .object(let object) = decoded else {
            throw LivePushError(.overlayInvalid, "the body is not a JSON object")
        }
        return try decode(object, base: base, image: image)
    }
}

extension Overlay {
    /// A schedule entry's `"overlays"`: a list of at most ``maxPerEntry`` overlay objects with
    /// distinct ids, image paths relative to the schedule's directory. Throws `scheduleInvalid`
    /// naming the entry and the overlay's field.
    static func entryOverlays(_ value: JSONField, entry: String, relativeTo directory: String?) throws(LivePushError) -> [Overlay] {
        func refuse(_ why: String) -> LivePushError { PlayoutSchedule.refuse(entry, "overlays", why) }
        guard case .array(let items) = value else { throw refuse("must be a list of overlay objects") }
        guard items.count <= maxPerEntry else { throw refuse("an entry carries at most \(maxPerEntry) overlays") }
        var overlays: [Overlay] = []
        for item in items {
            guard case .object(let object) = item else { throw refuse("must be a list of overlay objects") }
            do throws(LivePushError) {
                let overlay = try decode(object) { path in
                    guard let directory, !path.hasPrefix("/") else { return path }
                    return URL(fileURLWithPath: directory).appendingPathComponent(path).path
                }
                guard !overlays.contains(where: { $0.id == overlay.id }) else { throw LivePushError(.overlayInvalid, "overlay \"\(overlay.id)\" is given twice") }
                overlays.append(overlay)
            } catch {
                throw refuse(error.detail ?? error.message)
            }
        }
        return overlays
    }
}
