import FoundationEssentials
import Hummingbird
import LivePush
import Logging

/// `--control HOST:PORT`: a running channel's timeline over HTTP with JSON (Hummingbird).
///
/// - `GET /timeline`: the entry on air and what is still scheduled.
/// - `POST /schedule-now` with a clip (`{"id", "source", "in", "out"}`): plays it now (into the
///   running ad break, or cutting the content, which resumes after it).
/// - `POST /append` with a clip: adds it to the main content.
/// - `POST /skip`: ends the entry on air.
/// - `POST /blackout` (optionally `{"duration": SECONDS}`): the alternate content from now, the
///   timeline running on underneath; `POST /blackout/end` ends it.
/// - `GET /epg.xml`: the programme guide (XMLTV); `GET /as-run`: the as-run log's last lines
///   (JSON lines, see ``ExportResponse``).
/// - `GET`, `POST /overlays`, `PATCH`, `DELETE /overlays/ID`: the live overlays (``OverlayRoutes``).
///
/// A request that is not valid gets 400 with `{"error": {code, hex, name, message}}`
/// (`controlRequestInvalid`, or `scheduleInvalid` naming the clip's field) and changes nothing.
/// Sources resolve inside `root` (the schedule's directory). With a token every request needs
/// `Authorization: Bearer TOKEN`; every request passes ``ControlAccessMiddleware`` first.
struct PlayoutControlServer {
    let control: PlayoutControl
    let root: MediaRoot
    let token: String?
    let exports: ScheduleExports
    static let maxBodyBytes = 64 * 1024

    /// Serves until the task is cancelled; `ready` gets the bound port.
    func run(host: String, port: Int, ready: @escaping @Sendable (Int) -> Void) async throws {
        let router = Router()
        let access = ControlAccessPolicy(host: host, port: port)
        router.add(middleware: ControlAccessMiddleware(policy: access))
        router.add(middleware: BearerTokenMiddleware(token: token))
        router.get("/timeline") { _, _ in json(timeline) }
        router.get("/epg.xml") { _, _ in ExportResponse.guide(exports, control) }
        router.get("/as-run") { _, _ in ExportResponse.asRun(exports) }
        router.post("/skip") { _, _ in
            control.skip()
            return json(.object([("ok", .bool(true))]), status: .accepted)
        }
        router.post("/blackout") { request, _ in
            guard let buffer = try? await request.body.collect(upTo: Self.maxBodyBytes) else {
                return refusal(LivePushError(.controlRequestInvalid, "the body is larger than \(Self.maxBodyBytes) bytes"))
            }
            do throws(LivePushError) {
                try control.startBlackout(for: try Self.blackoutDuration(Data(buffer.readableBytesView)))
            } catch {
                return refusal(error)
            }
            return json(.object([("ok", .bool(true))]), status: .accepted)
        }
        router.post("/blackout/end") { _, _ in
            do throws(LivePushError) {
                try control.endBlackout()
            } catch {
                return refusal(error)
            }
            return json(.object([("ok", .bool(true))]), status: .accepted)
        }
        router.post("/schedule-now") { request, _ in
            try await withClip(request) { clip in
                control.scheduleNow(clip)
                return json(.object([("ok", .bool(true)), ("id", .string(clip.id))]), status: .accepted)
            }
        }
        router.post("/append") { request, _ in
            try await withClip(request) { clip in
                do throws(LivePushError) {
                    try control.appendContent(clip)
                } catch {
                    return refusal(error)
                }
                return json(.object([("ok", .bool(true)), ("id", .string(clip.id))]))
            }
        }
        OverlayRoutes(root: root, maxBodyBytes: Self.maxBodyBytes).register(on: router, prefix: "overlays") { [control] _ in
            .success(OverlayRoutes.Target(change: { change throws(LivePushError) in
                try await control.changeOverlay(change, waitingUpTo: OverlayRoutes.answerWait)
            }, list: { control.overlays }))
        }
        var quiet = Logger(label: "livepush.control")
        quiet.logLevel = .critical  // stdout carries the channel's events
        let app = Application(router: router, configuration: .init(address: .hostname(host, port: port)),
                              onServerRunning: { channel in
                                  access.port = channel.localAddress?.port ?? port
                                  ready(access.port)
                              }, logger: quiet)
        try await app.runService(gracefulShutdownSignals: [])
    }

    private var timeline: JSONValue {
        .object([
            ("current", control.currentEntry.map(EventFormatter.json) ?? .null),
            ("content", .array(control.schedule.content.map { .string($0.id) })),
            ("ads", .array(control.schedule.ads.map { .string($0.clip.id) })),
        ])
    }

    private func withClip(_ request: Request, _ body: (PlayoutSchedule.Clip) -> Response) async throws -> Response {
        guard let buffer = try? await request.body.collect(upTo: Self.maxBodyBytes) else {
            return refusal(LivePushError(.controlRequestInvalid, "the body is missing or larger than \(Self.maxBodyBytes) bytes"))
        }
        do throws(LivePushError) {
            return body(try Self.clip(Data(buffer.readableBytesView), root: root))
        } catch {
            return refusal(error)
        }
    }

    /// A clip from a request's body, its source a readable regular file inside `root`.
    static func clip(_ body: Data, root: MediaRoot) throws(LivePushError) -> PlayoutSchedule.Clip {
        var clip = try PlayoutSchedule.Clip(json: body, relativeTo: root.path)
        do throws(LivePushError) {
            clip.source = try root.fileToRead(clip.source)
        } catch {
            throw LivePushError(.pathOutsideMediaRoot, "entry \"\(clip.id)\", field \"source\": \(error.detail ?? error.message)")
        }
        // An entry's logo, like its source, inside the root.
        for index in clip.overlays.indices {
            guard case .image(let path) = clip.overlays[index].content else { continue }
            do throws(LivePushError) {
                clip.overlays[index].content = .image(path: try root.fileToRead(path))
            } catch {
                throw LivePushError(.pathOutsideMediaRoot, "entry \"\(clip.id)\", overlay \"\(clip.overlays[index].id)\", field \"image\": \(error.detail ?? error.message)")
            }
        }
        return clip
    }

    /// The optional `{"duration": SECONDS}` of a blackout (an empty body: until ended).
    static func blackoutDuration(_ body: Data) throws(LivePushError) -> Duration? {
        guard !JSONResponse.isBlank(body) else { return nil }
        guard let decoded = try? JSONDecoder().decode(JSONField.self, from: body), case .object(let object) = decoded else {
            throw LivePushError(.controlRequestInvalid, "the body is not a JSON object")
        }
        if let unknown = object.keys.first(where: { $0 != "duration" }) {
            throw LivePushError(.controlRequestInvalid, "unknown field \"\(unknown)\"")
        }
        guard let value = object["duration"] else { return nil }
        guard case .number(let seconds) = value, seconds > 0, seconds <= 86_400 else {
            throw LivePushError(.controlRequestInvalid, "duration: give seconds, more than 0 and at most 86400")
        }
        return .milliseconds(Int64(seconds * 1000))
    }

    private func refusal(_ error: LivePushError) -> Response {
        JSONResponse.refusal(error)
    }

    private func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        JSONResponse.make(value, status: status)
    }
}
