import Foundation

/// A throwaway certificate authority for rtmps:// tests, made with openssl: a CA certificate
/// (what `TLSOptions.caFile` / `--ca-file` trust) and server certificates it signs.
///
///     let ca = try TestCertificateAuthority()
///     defer { ca.remove() }
///     let server = try NginxRTMPServer(tlsCertificate: ca.issue(names: ["IP:127.0.0.1"]))
///
/// Keys are P-256: quick to make, so every test can have its own CA.
final class TestCertificateAuthority {
    struct ServerCertificate {
        let certificate: String
        let key: String
    }

    enum Failure: Error, CustomStringConvertible {
        case openssl(String)
        var description: String {
            switch self {
            case .openssl(let summary): "openssl failed: \(summary)"
            }
        }
    }

    /// The names a usable test server's certificate carries: both ways the tests reach it.
    static let loopbackNames = ["IP:127.0.0.1", "DNS:localhost"]

    let directory: URL
    /// The CA certificate, PEM.
    let certificatePath: String
    private let keyPath: String
    private var issued = 0

    init() throws {
        directory = try TestMedia.makeTemporaryDirectory(prefix: "test-ca")
        certificatePath = directory.appendingPathComponent("ca.pem").path
        keyPath = directory.appendingPathComponent("ca.key").path
        do {
            try Self.openssl(["req", "-x509"] + Self.newKey(keyPath) + [
                "-out", certificatePath, "-days", "2", "-subj", "/CN=LivePush Test CA",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ])
        } catch {
            remove()
            throw error
        }
    }

    /// A server certificate signed by this CA for `names` (subjectAltName entries such as
    /// `IP:127.0.0.1` or `DNS:localhost`). `expired` makes one whose validity ended a day ago.
    func issue(names: [String] = TestCertificateAuthority.loopbackNames, expired: Bool = false) throws -> ServerCertificate {
        issued += 1
        let base = directory.appendingPathComponent("server\(issued)").path
        let extensions = base + ".ext"
        try "subjectAltName=\(names.joined(separator: ","))\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
            .write(toFile: extensions, atomically: true, encoding: .utf8)
        // Names are checked against subjectAltName only; the CN names nothing a test connects to.
        try Self.openssl(["req"] + Self.newKey(base + ".key") + ["-out", base + ".csr", "-subj", "/CN=LivePush test server"])
        // -days -1 puts notAfter a day before notBefore (now): expired from the start.
        try Self.openssl(["x509", "-req", "-in", base + ".csr", "-CA", certificatePath, "-CAkey", keyPath,
                          "-days", expired ? "-1" : "1", "-extfile", extensions, "-out", base + ".pem"])
        return ServerCertificate(certificate: base + ".pem", key: base + ".key")
    }

    func remove() { TestMedia.removeTemporaryDirectory(directory) }

    private static func newKey(_ path: String) -> [String] {
        ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path]
    }

    private static func openssl(_ arguments: [String]) throws {
        let result = try ProcessRunner.run("openssl", arguments, timeout: 30)
        guard result.succeeded else { throw Failure.openssl(result.summary) }
    }
}
