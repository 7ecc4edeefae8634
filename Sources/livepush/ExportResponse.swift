import Hummingbird
import LivePush

/// The schedule exports over HTTP (playout's `--control` and `livepush channels`): the
/// programme guide as XMLTV, and the as-run log's last lines as JSON lines.
enum ExportResponse {
    /// `GET /epg.xml`: the guide now.
    static func guide(_ exports: ScheduleExports, _ control: PlayoutControl) -> Response {
        text(exports.guide(control), type: "application/xml; charset=utf-8")
    }

    /// `GET /as-run`: the lines the journal keeps (the last 1000; 100 per channel), oldest first, one JSON object
    /// per line (`application/x-ndjson`; empty before anything has aired).
    static func asRun(_ exports: ScheduleExports) -> Response {
        let lines = exports.journal.lines
        return text(lines.isEmpty ? "" : lines.joined(separator: "\n") + "\n", type: "application/x-ndjson")
    }

    private static func text(_ body: String, type: String) -> Response {
        var fields = HTTPFields()
        fields[.contentType] = type
        return Response(status: .ok, headers: fields, body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}
