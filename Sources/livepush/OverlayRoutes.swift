import FoundationEssentials
import Hummingbird
import LivePush

/// `/overlays` of a running push, on playout's `--control` and on each of `livepush channels`'
/// channels (`/channels/ID/overlays`):
///
/// - `GET /overlays`: the live overlays, `{"overlays": [...]}`.
/// - `POST /overlays` with `{"id", "text" | "image" | "clock", "x", "y", "size", "color",
///   "background", "opacity", "fadeIn", "fadeOut"}`: adds one (201).
/// - `PATCH /overlays/ID` with the fields to change: changes it (200).
/// - `DELETE /overlays/ID`: removes it, after its fade-out (200).
///
/// A change answers once the first picture with it is drawn (at most ``answerWait``), with where
/// it landed on the output clock: `"applied": {"mediaTime": SECONDS, "frame": N, "after":
/// SECONDS}`; `"applied": null` and 202 when no picture came in time (the change is kept). A
/// bad overlay gets 400 (`overlayInvalid`, naming the field), an unknown id 404
/// (`overlayNotFound`); images resolve inside the media root.
struct OverlayRoutes: Sendable {
    /// The push whose overlays the routes change (nil: none runs, 400 `invalidState`).
    struct Target: Sendable {
        var change: @Sendable (OverlayChange) async throws(LivePushError) -> OverlayApplied?
        var list: @Sendable () -> [Overlay]
    }

    let root: MediaRoot
    let maxBodyBytes: Int
    static let answerWait = Duration.seconds(2)

    /// Adds the routes under `prefix` (`overlays`, or `:id/overlays` in the channels' group).
    func register<Routes: RouterMethods<BasicRequestContext>>(on routes: Routes, prefix: String,
                                                                target: @escaping @Sendable (BasicRequestContext) async -> Result<Target, LivePushError>) {
        routes.get(RouterPath(prefix)) { _, context in
            try await with(target(context)) { target throws(LivePushError) in
                JSONResponse.make(.object([("overlays", .array(target.list().map(Self.json)))]))
            }
        }
        routes.post(RouterPath(prefix)) { request, context in
            let body = await collect(request)
            return try await with(target(context)) { target throws(LivePushError) in
                let overlay = try Overlay.decode(json: try body.get(), image: resolve)
                return try await answer(try await target.change(.add(overlay)), overlay: overlay, status: .created)
            }
        }
        routes.patch(RouterPath(prefix + "/:overlay")) { request, context in
            let body = await collect(request)
            let id = context.parameters.get("overlay") ?? ""
            return try await with(target(context)) { target throws(LivePushError) in
                guard let current = target.list().first(where: { $0.id == id }) else {
                    throw LivePushError(.overlayNotFound, "no overlay \"\(id.prefix(Overlay.maxIDLength))\"")
                }
                let overlay = try Overlay.decode(json: try body.get(), base: current, image: resolve)
                return try await answer(try await target.change(.update(overlay)), overlay: overlay, status: .ok)
            }
        }
        routes.delete(RouterPath(prefix + "/:overlay")) { _, context in
            let id = context.parameters.get("overlay") ?? ""
            return try await with(target(context)) { target throws(LivePushError) in
                try await answer(try await target.change(.remove(id: id)), id: id, status: .ok)
            }
        }
    }

    /// An image's path inside the media root.
    private func resolve(_ path: String) throws(LivePushError) -> String {
        try root.fileToRead(path)
    }

    private func collect(_ request: Request) async -> Result<Data, LivePushError> {
        guard let buffer = try? await request.body.collect(upTo: maxBodyBytes) else {
            return .failure(LivePushError(.overlayInvalid, "the body is missing or larger than \(maxBodyBytes) bytes"))
        }
        return .success(Data(buffer.readableBytesView))
    }

    private func with(_ target: Result<Target, LivePushError>,
                      _ body: (Target) async throws(LivePushError) -> Response) async -> Response {
        do throws(LivePushError) {
            return try await body(try target.get())
        } catch {
            return JSONResponse.refusal(error, status: error.code == .overlayNotFound || error.code == .channelNotFound ? .notFound : .badRequest)
        }
    }

    private func answer(_ applied: OverlayApplied?, overlay: Overlay? = nil, id: String? = nil,
                        status: HTTPResponse.Status) -> Response {
        var fields: [(String, JSONValue)] = [("ok", .bool(true)), ("id", .string(overlay?.id ?? id ?? ""))]
        if let overlay { fields.append(("overlay", Self.json(overlay))) }
        fields.append(("applied", applied.map(Self.json) ?? .null))
        return JSONResponse.make(.object(fields), status: applied == nil ? .accepted : status)
    }

    static func json(_ applied: OverlayApplied) -> JSONValue {
        .object([("mediaTime", .double(seconds(applied.mediaTime))), ("frame", .int(Int64(applied.frame))),
                 ("after", applied.after.map { .double(seconds($0)) } ?? .null)])
    }

    static func json(_ overlay: Overlay) -> JSONValue {
        var fields: [(String, JSONValue)] = [("id", .string(overlay.id))]
        switch overlay.content {
        case .text(let text): fields.append(("text", .string(text)))
        case .image(let path): fields.append(("image", .string(path)))
        case .clock(let style): fields.append(("clock", .string(style.rawValue)))
        }
        fields += [("x", .int(Int64(overlay.x))), ("y", .int(Int64(overlay.y)))]
        if let size = overlay.size { fields.append(("size", .int(Int64(size)))) }
        fields.append(("color", .string(overlay.color.hex)))
        if let background = overlay.background { fields.append(("background", .string(background.hex))) }
        fields += [("opacity", .double(overlay.opacity)), ("fadeIn", .double(seconds(overlay.fadeIn))),
                   ("fadeOut", .double(seconds(overlay.fadeOut)))]
        return .object(fields)
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
