import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A private nginx + nginx-rtmp instance for integration tests.
///
/// Each instance runs its own nginx in the foreground (`daemon off; master_process off;`) on a
/// free 127.0.0.1 port, with its config, logs and recordings in a fresh temp directory. The
/// `live` application records every published stream to `<dir>/rec/<stream>.flv`; when nginx
/// has closed a recording, `exec_record_done` touches `<recording>.done`, which is what
/// `awaitRecording` waits for. No HTTP server is configured.
///
///     let server = try NginxRTMPServer()
///     defer { server.stop() }
///     // publish to server.url(stream: "s1") ...
///     let flv = try await server.awaitRecording(stream: "s1", timeout: 15)
///
/// Stream names should be unique per server: recordings are not uniquified, so republishing
/// a name overwrites its file, and an old `.done` marker would satisfy `awaitRecording` early.
/// `stop()` is idempotent and also runs from `deinit`. The temp directory is deleted in
/// `deinit` unless `LIVEPUSH_KEEP_TEST_FILES=1`.
final class NginxRTMPServer: @unchecked Sendable {
    enum Failure: Error, CustomStringConvertible {
        case unavailable(String)
        case startFailed(String, log: String)
        case exited(String, log: String)
        case recordingTimeout(stream: String, after: TimeInterval, log: String)

        var description: String {
            switch self {
            case .unavailable(let what): return "nginx-rtmp unavailable: \(what)"
            case .startFailed(let why, let log): return "nginx did not start: \(why)\n--- nginx log ---\n\(log)"
            case .exited(let why, let log): return "nginx exited unexpectedly: \(why)\n--- nginx log ---\n\(log)"
            case .recordingTimeout(let stream, let after, let log):
                return "no finished recording of '\(stream)' after \(after)s\n--- nginx log ---\n\(log)"
            }
        }
    }

    static let defaultNginxPath = "/usr/sbin/nginx"
    static let defaultModulePath = "/usr/lib/nginx/modules/ngx_rtmp_module.so"
    /// Default RTMP application name.
    static let application = "live"
    /// A second application, recording to `<dir>/rec/moved/<stream>.flv`: where a server's
    /// reconnect request moves a publisher (nginx refuses a second publish of one name in one
    /// application as "already publishing" while the first goes on).
    static let movedApplication = "moved"

    /// True when both the nginx binary and the rtmp module are installed.
    static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: defaultNginxPath)
            && FileManager.default.fileExists(atPath: defaultModulePath)
    }

    /// The loopback TCP port nginx listens on for RTMP.
    let port: UInt16
    /// With `tlsCertificate`: a TLS port (nginx's stream module, serving that certificate) in front of the RTMP port.
    let tlsPort: UInt16?
    /// The nginx prefix directory holding conf, logs and recordings.
    let directory: URL
    /// Where recordings land (`record_path`).
    let recordDirectory: URL
    let configPath: String
    let errorLogPath: String
    /// nginx's own stdout/stderr (startup errors before the error log is open end up here).
    let consoleLogPath: String

    private let process: Process
    private let exitSignal: DispatchSemaphore
    private let lock = NSLock()
    private var stopped = false

    /// Starts nginx and returns once its RTMP port accepts TCP connections.
    /// - Parameter startupTimeout: upper bound for nginx to become ready (per attempt; a lost
    ///   race for the chosen free port is retried up to twice with a new port).
    /// - Parameter onPublishURL: when set, the `live` application gets `on_publish URL;`.
    /// - Parameter tlsCertificate: also listen for `rtmps://` (TLS terminated by nginx's stream
    ///   module) with this certificate (see ``TestCertificateAuthority``).
    init(
        nginxPath: String = NginxRTMPServer.defaultNginxPath,
        modulePath: String = NginxRTMPServer.defaultModulePath,
        startupTimeout: TimeInterval = 10,
        onPublishURL: String? = nil,
        tlsCertificate: TestCertificateAuthority.ServerCertificate? = nil,
        dropIdlePublisher: Duration? = nil,
        recordAppend: Bool = false,
        port fixedPort: UInt16? = nil,
        workerConnections: Int = 256,
        namespace: String? = nil
    ) throws {
        guard FileManager.default.isExecutableFile(atPath: nginxPath) else { throw Failure.unavailable(nginxPath) }
        guard FileManager.default.fileExists(atPath: modulePath) else { throw Failure.unavailable(modulePath) }

        let directory = try TestMedia.makeTemporaryDirectory(prefix: "nginx-rtmp")
        let recordDirectory = directory.appendingPathComponent("rec", isDirectory: true)
        try FileManager.default.createDirectory(at: recordDirectory, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: recordDirectory.appendingPathComponent(Self.movedApplication, isDirectory: true),
                                                withIntermediateDirectories: true)
        let configPath = directory.appendingPathComponent("nginx.conf").path
        let errorLogPath = directory.appendingPathComponent("error.log").path
        let consoleLogPath = directory.appendingPathComponent("console.log").path

        var lastError: any Error = Failure.startFailed("no attempt made", log: "")
        for _ in 0..<3 {
            let port: UInt16, tlsPort: UInt16?
            do {
                port = try fixedPort ?? Self.freeLoopbackPort()
                tlsPort = tlsCertificate != nil ? try Self.freeLoopbackPort() : nil
            } catch { lastError = error; continue }
            var config = Self.configuration(port: port, directory: directory.path, recordDirectory: recordDirectory.path,
                                            errorLogPath: errorLogPath, modulePath: modulePath,
                                            onPublishURL: onPublishURL, dropIdlePublisher: dropIdlePublisher,
                                            recordAppend: recordAppend, workerConnections: workerConnections)
            if let tlsPort, let certificate = tlsCertificate {
                config = Self.tlsConfiguration(config, tlsPort: tlsPort, rtmpPort: port, modulePath: modulePath,
                                               certificate: certificate)
            }
            try config.write(toFile: configPath, atomically: true, encoding: .utf8)
            // Each attempt gets a fresh log so failures describe this attempt only.
            try? FileManager.default.removeItem(atPath: errorLogPath)
            _ = FileManager.default.createFile(atPath: consoleLogPath, contents: nil)

            let console = try FileHandle(forWritingTo: URL(fileURLWithPath: consoleLogPath))
            let process = Process()
            process.executableURL = URL(fileURLWithPath: nginxPath)
            // -e: also redirect the startup error log away from the system-wide /var/log/nginx.
            process.arguments = ["-p", directory.path + "/", "-c", configPath, "-e", errorLogPath]
            if let namespace {  // a network namespace of the test's (NetworkNamespace); `ip netns exec` execs nginx
                process.executableURL = URL(fileURLWithPath: ProcessRunner.which("ip") ?? "/usr/sbin/ip")
                process.arguments = ["netns", "exec", namespace, nginxPath] + process.arguments!
            }
            process.currentDirectoryURL = directory
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = console
            process.standardError = console
            let exitSignal = DispatchSemaphore(value: 0)
            process.terminationHandler = { _ in exitSignal.signal() }
            do {
                try ProcessRunner.launch(process)  // child must not inherit a blocked SIGTERM
            } catch {
                try? console.close()
                throw Failure.startFailed("could not launch \(nginxPath): \(error)", log: "")
            }
            try? console.close()

            let deadline = Date().addingTimeInterval(startupTimeout)
            var ready = false
            while Date() < deadline {
                if !process.isRunning { break }
                let accepts = namespace == nil ? Self.acceptsConnections(port:) : { Self.listens(port: $0, seenBy: process.processIdentifier) }
                if accepts(port) && tlsPort.map(accepts) ?? true {
                    // Guard against another process having grabbed the port meanwhile.
                    ready = process.isRunning
                    break
                }
                usleep(20_000)  // readiness poll interval; bounded by `deadline`
            }
            let log = Self.readLog(errorLogPath, consoleLogPath)
            if ready {
                self.port = port
                self.tlsPort = tlsPort
                self.directory = directory
                self.recordDirectory = recordDirectory
                self.configPath = configPath
                self.errorLogPath = errorLogPath
                self.consoleLogPath = consoleLogPath
                self.process = process
                self.exitSignal = exitSignal
                return
            }
            let exitedEarly = !process.isRunning
            Self.terminate(process, exitSignal: exitSignal)
            if !exitedEarly || !log.contains("Address already in use") {
                // Not a port race: retrying will not help.
                TestMedia.removeTemporaryDirectory(directory)
                throw Failure.startFailed(
                    exitedEarly ? "nginx exited with status \(process.terminationStatus)"
                        : "port \(port) not ready after \(startupTimeout)s",
                    log: log)
            }
            lastError = Failure.startFailed("port \(port) already in use", log: log)
        }
        TestMedia.removeTemporaryDirectory(directory)
        throw lastError
    }

    deinit {
        stop()
        TestMedia.removeTemporaryDirectory(directory)
    }

    // MARK: Public API

    /// `rtmp://127.0.0.1:<port>/<app>/<stream>`
    func url(app: String = NginxRTMPServer.application, stream: String) -> String {
        "rtmp://127.0.0.1:\(port)/\(app)/\(stream)"
    }

    /// Where nginx records `stream` (the file exists once publishing has started).
    func recordingPath(stream: String) -> String {
        recordDirectory.appendingPathComponent("\(stream).flv").path
    }

    /// Where nginx records `stream` published to the ``movedApplication``.
    func movedRecordingPath(stream: String) -> String {
        recordDirectory.appendingPathComponent(Self.movedApplication, isDirectory: true).appendingPathComponent("\(stream).flv").path
    }

    /// Path of the marker `exec_record_done` creates once the recording of `stream` is closed.
    func recordingDoneMarkerPath(stream: String) -> String { recordingPath(stream: stream) + ".done" }

    /// With `recordAppend`: how many publishes of `stream` nginx has closed the recording of.
    /// A publish nginx refused as "Already publishing" counts too: nginx opens its recording
    /// before the live module refuses it, and closes it when the refused client goes.
    func closedRecordings(stream: String) -> Int {
        let prefix = "\(stream).flv.closed."
        return ((try? FileManager.default.contentsOfDirectory(atPath: recordDirectory.path)) ?? []).filter { $0.hasPrefix(prefix) }.count
    }

    /// How many publishes nginx refused because the stream already had a publisher.
    var alreadyPublishingRefusals: Int {
        errorLog.components(separatedBy: "live: already publishing").count - 1
    }

    /// Waits until nginx has finished writing the recording of `stream` (the publisher has
    /// disconnected and nginx closed the file) and returns the recording's path.
    /// Throws if nginx exits or `timeout` seconds pass first.
    func awaitRecording(stream: String, timeout: TimeInterval = 15) async throws -> String {
        let marker = recordingDoneMarkerPath(stream: stream)
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if FileManager.default.fileExists(atPath: marker) { return recordingPath(stream: stream) }
            if !process.isRunning {
                throw Failure.exited("while waiting for recording '\(stream)'", log: errorLog)
            }
            if Date() >= deadline {
                throw Failure.recordingTimeout(stream: stream, after: timeout, log: errorLog)
            }
            try await Task.sleep(nanoseconds: 25_000_000)  // completion poll interval; bounded above
        }
    }

    /// True while the nginx process is alive.
    var isRunning: Bool { process.isRunning }

    /// nginx's error log (info level) followed by anything it printed to stdout/stderr.
    var errorLog: String { Self.readLog(errorLogPath, consoleLogPath) }

    /// Stops nginx in its tracks (SIGSTOP; it runs as one process): a server too busy to read.
    /// The kernel still accepts and buffers what is sent to it, up to its receive buffers.
    func freeze() {
        kill(process.processIdentifier, SIGSTOP)
    }

    /// Lets a frozen nginx run again (SIGCONT).
    func thaw() {
        kill(process.processIdentifier, SIGCONT)
    }

    /// Terminates nginx (SIGTERM, then SIGKILL after 5 s) and waits for it to exit.
    /// Safe to call more than once and from any thread.
    func stop() {
        lock.lock()
        let alreadyStopped = stopped
        stopped = true
        lock.unlock()
        if alreadyStopped { return }
        thaw()  // a frozen nginx would hold its SIGTERM until SIGKILL
        Self.terminate(process, exitSignal: exitSignal)
    }

    /// `rtmps://<host>:<tlsPort>/<app>/<stream>` (nil without a TLS certificate).
    func tlsURL(host: String = "127.0.0.1", app: String = NginxRTMPServer.application, stream: String) -> String? {
        tlsPort.map { "rtmps://\(host):\($0)/\(app)/\(stream)" }
    }

    // MARK: Internals

    /// Adds a TLS listener that forwards to the RTMP port: what an rtmps:// CDN edge does.
    static func tlsConfiguration(
        _ config: String, tlsPort: UInt16, rtmpPort: UInt16, modulePath: String,
        certificate: TestCertificateAuthority.ServerCertificate
    ) -> String {
        let streamModule = URL(fileURLWithPath: modulePath).deletingLastPathComponent()
            .appendingPathComponent("ngx_stream_module.so").path
        return config.replacingOccurrences(of: "load_module \(modulePath);", with: "load_module \(modulePath);\nload_module \(streamModule);")
            + """
            stream {
                server {
                    listen 127.0.0.1:\(tlsPort) ssl;
                    ssl_certificate \(certificate.certificate);
                    ssl_certificate_key \(certificate.key);
                    proxy_pass 127.0.0.1:\(rtmpPort);
                }
            }

            """
    }


    static func configuration(
        port: UInt16, directory: String, recordDirectory: String, errorLogPath: String, modulePath: String,
        onPublishURL: String? = nil, dropIdlePublisher: Duration? = nil, recordAppend: Bool = false,
        workerConnections: Int = 256
    ) -> String {
        let user = geteuid() == 0 ? "user root;\n" : ""
        // nginx-rtmp asks this URL whether a publish is allowed (2xx: yes), passing the publish arguments.
        var extra = onPublishURL.map { "\n            on_publish \($0);" } ?? ""
        // Without it nginx holds a silent publisher until its 60 s read timeout / ping check.
        if let dropIdlePublisher { extra += "\n            drop_idle_publisher \(dropIdlePublisher.components.seconds)s;" }
        // Every publish of a name adds to one recording (timestamps continued by nginx), and
        // every close leaves a marker of its own: see ``closedRecordings(stream:)``.
        if recordAppend {
            extra += "\n            record_append on;\n            exec_record_done /usr/bin/mktemp $path.closed.XXXXXX;"
        }
        return """
            # Generated by NginxRTMPServer (LivePush integration tests).
            daemon off;
            master_process off;
            \(user)error_log \(errorLogPath) info;
            pid \(directory)/nginx.pid;
            load_module \(modulePath);

            events {
                worker_connections \(workerConnections);
            }

            rtmp {
                server {
                    listen 127.0.0.1:\(port);
                    chunk_size 4096;

                    application \(application) {
                        live on;
                        record all;
                        record_path \(recordDirectory);
                        record_unique off;
                        # Runs after the recording file is closed: the completion signal.
                        exec_record_done /usr/bin/touch $path.done;\(extra)
                    }

                    application \(movedApplication) {
                        live on;
                        record all;
                        record_path \(recordDirectory)/\(movedApplication);
                        record_unique off;
                        exec_record_done /usr/bin/touch $path.done;
                    }
                }
            }

            """
    }

    /// Finds a currently unused loopback port by binding port 0 and releasing it.
    static func freeLoopbackPort() throws -> UInt16 {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Failure.startFailed("socket() failed: errno \(errno)", log: "") }
        defer { close(fd) }
        var address = loopbackAddress(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw Failure.startFailed("bind() failed: errno \(errno)", log: "") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw Failure.startFailed("getsockname() failed: errno \(errno)", log: "") }
        return UInt16(bigEndian: address.sin_port)
    }

    /// True if a TCP connection to 127.0.0.1:`port` succeeds right now.
    /// Whether a socket listens on TCP `port` in the network namespace of process `pid` (its
    /// `/proc/PID/net/tcp`): a server in a namespace of the test's cannot be connected to from here.
    static func listens(port: UInt16, seenBy pid: Int32) -> Bool {
        let needle = String(format: ":%04X", port)
        let table = (try? String(contentsOfFile: "/proc/\(pid)/net/tcp", encoding: .utf8)) ?? ""
        return table.split(separator: "\n").contains { row in
            let fields = row.split(separator: " ")
            return fields.count > 3 && fields[1].hasSuffix(needle) && fields[3] == "0A"
        }
    }

    static func acceptsConnections(port: UInt16) -> Bool {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopbackAddress(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return result == 0
    }

    private static func loopbackAddress(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr = in_addr(s_addr: UInt32(0x7F00_0001).bigEndian)
        return address
    }

    private static func terminate(_ process: Process, exitSignal: DispatchSemaphore) {
        guard process.isRunning else { return }
        process.terminate()  // SIGTERM: nginx fast shutdown
        if exitSignal.wait(timeout: .now() + 5) == .timedOut {
            kill(process.processIdentifier, SIGKILL)
            _ = exitSignal.wait(timeout: .now() + 5)
        }
    }

    private static func readLog(_ errorLogPath: String, _ consoleLogPath: String) -> String {
        let errorLog = (try? String(contentsOfFile: errorLogPath, encoding: .utf8)) ?? ""
        let console = (try? String(contentsOfFile: consoleLogPath, encoding: .utf8)) ?? ""
        return console.isEmpty ? errorLog : errorLog + "--- nginx stdout/stderr ---\n" + console
    }
}
