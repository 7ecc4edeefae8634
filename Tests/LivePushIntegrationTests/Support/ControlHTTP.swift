import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request to a control endpoint (`playout --control`, `channels`), as the tests send them:
/// a JSON body in, the status and the answer out.
enum ControlHTTP {
    static func send(_ url: String, method: String = "GET", body: String? = nil) async throws -> (status: Int, data: Data) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.httpBody = body.map { Data($0.utf8) }
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    /// The answer as a JSON object (empty when it is not one).
    static func json(_ url: String, method: String = "GET", body: String? = nil) async throws -> (status: Int, json: [String: Any]) {
        let (status, data) = try await send(url, method: method, body: body)
        return (status, (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:])
    }

    /// The answer as text.
    static func text(_ url: String, method: String = "GET", body: String? = nil) async throws -> (status: Int, text: String) {
        let (status, data) = try await send(url, method: method, body: body)
        return (status, String(decoding: data, as: UTF8.self))
    }
}
