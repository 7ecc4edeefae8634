import FoundationEssentials
import Hummingbird
import LivePush

/// The HTTP answers of the control endpoints (playout's `--control` and `livepush channels`):
/// JSON bodies, and refusals as `{"error": {code, hex, name, message}}`.
enum JSONResponse {
    static func make(_ value: JSONValue, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(string: value.encoded + "\n")))
    }

    static func refusal(_ error: LivePushError, status: HTTPResponse.Status = .badRequest, headers: HTTPFields = [:]) -> Response {
        make(.object([("error", EventFormatter.json(error))]), status: status, headers: headers)
    }

    /// An empty body, or one of whitespace only.
    static func isBlank(_ body: Data) -> Bool {
        body.allSatisfy { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
    }
}
