import FoundationEssentials
import Hummingbird
import LivePush
import Logging

/// The control API of `livepush channels` (HTTP with JSON, Hummingbird), with `/metrics`
/// (Prometheus text), `/healthz` and `/readyz`. With a token, every `/channels` request needs
/// `Authorization: Bearer TOKEN` (401 otherwise); metrics and health stay open for scrapers
/// and probes. Every request passes ``ControlAccessMiddleware`` first (403 for a foreign
/// `Origin` or `Host`, 415 for a body that is not JSON), and every path resolves inside the
/// media root. An unknown channel gets 404, a bad body 400, a network input the configuration's
/// `apiInputs` does not allow 403 (``APIInputPolicy``), all `{"error": {code, hex, name,
/// message}}`; nothing is changed by a refused request. Adds and starts answer 202 at once: the
/// open runs on a thread of its own (``Channel/start()``), so no request waits on a probe.
/// `/channels/ID/overlays` changes a running channel's live overlays (``OverlayRoutes``).
struct ChannelsControlServer {
    let manager: ChannelManager
    let token: String?
    /// Where the paths of added channels and clips must lie (the configuration's media root).
    let root: MediaRoot
    /// Reads the configuration file again (`POST /reload`, as SIGHUP).
    let reload: @Sendable () throws(LivePushError) -> ChannelReload
    static let maxBodyBytes = 64 * 1024

    func run(host: String, port: Int, ready: @escaping @Sendable (Int) -> Void) async throws {
        let router = Router()
        let access = ControlAccessPolicy(host: host, port: port)
        router.add(middleware: ControlAccessMiddleware(policy: access))
        let metrics = ChannelMetrics()
        router.get("/healthz") { _, _ in json(.object([("ok", .bool(true))])) }
        router.get("/readyz") { _, _ in
            let ready = manager.isReady
            return json(.object([("ready", .bool(ready))]), status: ready ? .ok : .serviceUnavailable)
        }
        router.get("/metrics") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                     body: .init(byteBuffer: ByteBuffer(bytes: metrics.render(manager))))
        }
        router.group("reload").add(middleware: BearerTokenMiddleware(token: token)).post { request, _ in
            if let refused = await refuseBody(request) { return refused }
            do throws(LivePushError) {
                let done = try reload()
                let ids = { (list: [String]) in JSONValue.array(list.map { .string($0) }) }
                return json(.object([("added", ids(done.added)), ("removed", ids(done.removed)),
                                     ("restarted", ids(done.restarted)), ("unchanged", ids(done.unchanged))]))
            } catch {
                return refusal(error)
            }
        }
        let channels = router.group("channels").add(middleware: BearerTokenMiddleware(token: token))
        channels.get { _, _ in json(.array(manager.list.map { describe($0.snapshot) })) }
        channels.post { request, _ in
            try await withBody(request) { object throws(LivePushError) in
                guard case .string(let id) = object["id"] else {
                    throw LivePushError(.channelConfigInvalid, "field \"id\": is missing or not a string")
                }
                // A network input must be one the configuration lets API callers use.
                let spec = try manager.apiInputs.admit(try ChannelSpec(json: object, name: id, root: root))
                // Answered at once: the channel is `starting` while it opens (a live input's probe
                // can take its whole timeout), then `pushing` or `failed` with its error.
                let channel = try manager.add(spec, start: spec.autostart)
                return json(describe(channel.snapshot), status: .accepted)
            }
        }
        channels.get(":id") { _, context in
            try withChannel(context) { channel throws(LivePushError) in json(describe(channel.snapshot)) }
        }
        channels.delete(":id") { _, context in
            let id = context.parameters.get("id") ?? ""
            do throws(LivePushError) {
                try manager.remove(id)
            } catch {
                return refusal(error)
            }
            return json(.object([("ok", .bool(true)), ("id", .string(id))]))
        }
        for action in ["start", "stop", "restart"] {
            channels.post(":id/\(action)") { request, context in
                if let refused = await refuseBody(request) { return refused }
                return try withChannel(context) { channel throws(LivePushError) in
                    switch action {
                    case "start": try channel.start()
                    case "stop": channel.stop()
                    default: try channel.restart()
                    }
                    return json(describe(channel.snapshot), status: .accepted)
                }
            }
        }
        channels.post(":id/schedule-now") { request, context in
            try await withPlayout(request, context) { control, body throws(LivePushError) in
                control.scheduleNow(try PlayoutControlServer.clip(body, root: root))
            }
        }
        channels.post(":id/skip") { request, context in
            try await withPlayout(request, context) { control, body throws(LivePushError) in
                try Self.requireEmpty(body)
                control.skip()
            }
        }
        channels.get(":id/epg.xml") { _, context in
            guard let channel = manager.channel(context.parameters.get("id") ?? "") else { return notFound(context) }
            guard let control = await Self.playoutControl(of: channel) else {
                return refusal(LivePushError(.controlRequestInvalid, "channel \"\(channel.id)\" is not a running playout channel"))
            }
            return ExportResponse.guide(channel.exports, control)
        }
        channels.get(":id/as-run") { _, context in
            guard let channel = manager.channel(context.parameters.get("id") ?? "") else { return notFound(context) }
            return ExportResponse.asRun(channel.exports)
        }
        channels.post(":id/blackout") { request, context in
            try await withPlayout(request, context) { control, body throws(LivePushError) in
                try control.startBlackout(for: try PlayoutControlServer.blackoutDuration(body))
            }
        }
        channels.post(":id/blackout/end") { request, context in
            try await withPlayout(request, context) { control, body throws(LivePushError) in
                try Self.requireEmpty(body)
                try control.endBlackout()
            }
        }
        channels.post(":id/outputs") { request, context in
            guard let channel = manager.channel(context.parameters.get("id") ?? "") else { return notFound(context) }
            return try await withBody(request) { object throws(LivePushError) in
                guard case .string(let url) = object["url"], object.count == 1 else {
                    throw LivePushError(.controlRequestInvalid, "give {\"url\": \"rtmp://...\"}")
                }
                try channel.addOutput(url)
                return json(describe(channel.snapshot), status: .accepted)
            }
        }
        channels.delete(":id/outputs/:index") { _, context in
            try withChannel(context) { channel throws(LivePushError) in
                guard let index = context.parameters.get("index").flatMap({ Int($0) }) else {
                    throw LivePushError(.channelNotFound, "channel \"\(channel.id)\" has no output \(context.parameters.get("index") ?? "")")
                }
                try channel.removeOutput(at: index)
                return json(describe(channel.snapshot), status: .accepted)
            }
        }
        OverlayRoutes(root: root, maxBodyBytes: Self.maxBodyBytes).register(on: channels, prefix: ":id/overlays") { [manager] context in
            let id = context.parameters.get("id") ?? ""
            guard let channel = manager.channel(id) else { return .failure(LivePushError(.channelNotFound, "channel \"\(id)\"")) }
            return .success(OverlayRoutes.Target(change: { change throws(LivePushError) in
                try await channel.changeOverlay(change, waitingUpTo: OverlayRoutes.answerWait)
            }, list: { channel.overlays }))
        }
        var quiet = Logger(label: "livepush.control")
        quiet.logLevel = .critical
        let app = Application(router: router, configuration: .init(address: .hostname(host, port: port)),
                              onServerRunning: { channel in
                                  access.port = channel.localAddress?.port ?? port
                                  ready(access.port)
                              }, logger: quiet)
        try await app.runService(gracefulShutdownSignals: [])
    }

    // MARK: Requests

    private func withChannel(_ context: BasicRequestContext,
                             _ body: (Channel) throws(LivePushError) -> Response) throws -> Response {
        guard let channel = manager.channel(context.parameters.get("id") ?? "") else { return notFound(context) }
        do throws(LivePushError) {
            return try body(channel)
        } catch {
            return refusal(error)
        }
    }

    /// A playout channel's control, and the request's body (which may be empty).
    private func withPlayout(_ request: Request, _ context: BasicRequestContext,
                             _ body: (PlayoutControl, Data) throws(LivePushError) -> Void) async throws -> Response {
        guard let channel = manager.channel(context.parameters.get("id") ?? "") else { return notFound(context) }
        guard let buffer = try? await request.body.collect(upTo: Self.maxBodyBytes) else {
            return refusal(LivePushError(.controlRequestInvalid, "the body is larger than \(Self.maxBodyBytes) bytes"))
        }
        guard let control = await Self.playoutControl(of: channel) else {
            return refusal(LivePushError(.controlRequestInvalid, "channel \"\(channel.id)\" is not a running playout channel"))
        }
        do throws(LivePushError) {
            try body(control, Data(buffer.readableBytesView))
        } catch {
            return refusal(error)
        }
        return json(.object([("ok", .bool(true))]), status: .accepted)
    }

    /// A playout channel's controls. While the channel opens (its schedule read, its first entry
    /// probed, on a thread of its own) they do not exist yet: the request waits for them, up to
    /// `openWait`, suspended (it holds no thread, and other requests go on meanwhile).
    private static func playoutControl(of channel: Channel) async -> PlayoutControl? {
        let deadline = ContinuousClock.now + openWait
        while channel.playout == nil, channel.snapshot.status == .starting, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return channel.playout
    }

    static let openWait = Duration.seconds(10)

    /// A JSON object body, strictly decoded.
    private func withBody(_ request: Request, _ body: ([String: JSONField]) throws(LivePushError) -> Response) async throws -> Response {
        guard let buffer = try? await request.body.collect(upTo: Self.maxBodyBytes) else {
            return refusal(LivePushError(.controlRequestInvalid, "the body is missing or larger than \(Self.maxBodyBytes) bytes"))
        }
        guard let decoded = try? JSONDecoder().decode(JSONField.self, from: Data(buffer.readableBytesView)),
              case .object(let object) = decoded else {
            return refusal(LivePushError(.controlRequestInvalid, "the body is not a JSON object"))
        }
        do throws(LivePushError) {
            return try body(object)
        } catch {
            return refusal(error)
        }
    }

    /// Requests that take no body refuse one (a client that sends one means something else).
    static func requireEmpty(_ body: Data) throws(LivePushError) {
        guard JSONResponse.isBlank(body) else {
            throw LivePushError(.controlRequestInvalid, "this request takes no body")
        }
    }

    private func refuseBody(_ request: Request) async -> Response? {
        guard let buffer = try? await request.body.collect(upTo: Self.maxBodyBytes) else {
            return refusal(LivePushError(.controlRequestInvalid, "the body is larger than \(Self.maxBodyBytes) bytes"))
        }
        do throws(LivePushError) {
            try Self.requireEmpty(Data(buffer.readableBytesView))
            return nil
        } catch {
            return refusal(error)
        }
    }

    private func notFound(_ context: BasicRequestContext) -> Response {
        refusal(LivePushError(.channelNotFound, "channel \"\(context.parameters.get("id") ?? "")\""))
    }

    private func refusal(_ error: LivePushError) -> Response {
        let status: HTTPResponse.Status = switch error.code {
        case .channelNotFound: .notFound
        case .inputNotAllowed: .forbidden
        default: .badRequest
        }
        return JSONResponse.refusal(error, status: status)
    }

    private func json(_ value: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
        JSONResponse.make(value, status: status)
    }

    // MARK: Descriptions

    private func describe(_ channel: Channel.Snapshot) -> JSONValue {
        let source: JSONValue = switch channel.spec.source {
        case .file(let path, _): .object([("input", .string(path))])
        case .playout(let path): .object([("playout", .string(path))])
        case .live(let url): .object([("input", .string(Redaction.redactStreamKey(url)))])
        }
        let nextAttemptIn: JSONValue = channel.nextAttemptIn.map { .double(Double($0.nanosecondsValue) / 1e9) } ?? .null
        return .object([
            ("id", .string(channel.id)), ("state", .string(channel.status.rawValue)), ("source", source),
            ("outputs", .array(channel.outputs.enumerated().map { index, output in
                .object([("index", .int(Int64(index))), ("url", .string(output.url)), ("connected", .bool(output.connected)),
                         ("reconnects", .int(Int64(output.reconnects)))])
            })),
            ("entry", manager.channel(channel.id)?.playout?.currentEntry.map { .string($0.id) } ?? .null),
            ("stats", EventFormatter.json(channel.stats)),
            ("error", channel.lastError.map(EventFormatter.json) ?? .null),
            ("nextAttemptIn", nextAttemptIn),
        ])
    }
}

/// `Authorization: Bearer TOKEN` on every request it guards, when a token is set (compared
/// in constant time); 401 with a JSON error otherwise.
struct BearerTokenMiddleware<Context: RequestContext>: RouterMiddleware {
    let token: String?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let token else { return try await next(request, context) }
        let given = request.headers[.authorization] ?? ""
        let expected = "Bearer " + token
        guard given.utf8.count == expected.utf8.count,
              zip(given.utf8, expected.utf8).reduce(0, { $0 | ($1.0 ^ $1.1) }) == 0 else {
            return JSONResponse.refusal(LivePushError(.unauthorized, "give the header Authorization: Bearer <token>"),
                                        status: .unauthorized, headers: [.wwwAuthenticate: "Bearer"])
        }
        return try await next(request, context)
    }
}
