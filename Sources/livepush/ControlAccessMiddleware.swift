import Hummingbird
import LivePush

/// Applies a ``ControlAccessPolicy`` to every request of a control API, before its token is
/// checked and its body read: 403 for a foreign `Origin` or `Host`, 415 for a body that is not
/// JSON, as `{"error": {code, hex, name, message}}`.
struct ControlAccessMiddleware<Context: RequestContext>: RouterMiddleware {
    let policy: ControlAccessPolicy

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let length = request.headers[.contentLength].flatMap { Int($0) } ?? 0
        let hasBody = length > 0 || request.headers[.transferEncoding] != nil
        switch policy.verdict(method: request.method.rawValue, authority: request.head.authority,
                              origin: request.headers[.origin], contentType: request.headers[.contentType], hasBody: hasBody) {
        case .allowed:
            return try await next(request, context)
        case .forbidden(let why):
            return JSONResponse.refusal(LivePushError(.controlForbidden, why), status: .forbidden)
        case .unsupportedMediaType:
            return JSONResponse.refusal(LivePushError(.controlMediaTypeUnsupported, "give Content-Type: application/json"),
                                        status: .unsupportedMediaType)
        }
    }
}
