import Foundation
import LivePush
import XCTest

/// The README is an entry page and the reference lives in `docs/`. These tests hold the two
/// to what the code does: every flag `livepush help SUBCOMMAND` prints is explained in
/// `docs/cli.md`, the README stays short and opens with the two commands, every relative link
/// (and its anchor) reaches something, and the README's library example compiles.
final class DocsTests: XCTestCase {
    static let root = TestMedia.repositoryRoot

    /// The README's first block, verbatim: set up and push, then run the tests.
    static let openingCommands = """
        ```sh
        # 1. Set up (Debian packages) and push the sample to the embedded receiver (4 s, real time):
        bash scripts/install-deps.sh && swift build -c release && .build/release/livepush push Media/sample-h264-aac.mp4
        #    ... or to your own server:  .build/release/livepush push Media/sample-h264-aac.mp4 rtmp://HOST/app/stream

        # 2. Run the tests (unit tests, real pushes to nginx-rtmp, SRT, WebRTC and the embedded receiver, checked by
        #    decoding what arrived; then the API documentation, warnings as errors; the last line is `N passed, N failed`):
        bash scripts/test.sh
        ```
        """

    static func read(_ relativePath: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(relativePath), encoding: .utf8)
    }

    // MARK: - CLI flags

    /// The subcommands `livepush --help` lists (its SUBCOMMANDS section), `help` aside.
    static func subcommands() throws -> [String] {
        let result = try LivePushCLI.run(["--help"])
        XCTAssertTrue(result.succeeded, result.summary)
        var names: [String] = []
        var inSection = false
        for line in result.stdoutString.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("SUBCOMMANDS:") { inSection = true; continue }
            guard inSection else { continue }
            if line.isEmpty { continue }
            if !line.hasPrefix(" ") { break }
            // "  name    abstract"; an abstract's continuation lines are indented further.
            guard line.hasPrefix("  "), !line.hasPrefix("   "),
                  let word = line.split(separator: " ").first else { continue }
            let name = String(word)
            if name.range(of: #"^[a-z][a-z0-9-]*$"#, options: .regularExpression) != nil, name != "help" {
                names.append(name)
            }
        }
        return names
    }

    /// Every `--flag` in a help text (`--help` itself aside).
    static func flags(in text: String) -> Set<String> {
        let regex = try! NSRegularExpression(pattern: #"(?<![A-Za-z0-9-])--[a-z0-9][a-z0-9-]*"#)
        let range = NSRange(text.startIndex..., in: text)
        let found = regex.matches(in: text, range: range).compactMap { Range($0.range, in: text).map { String(text[$0]) } }
        return Set(found.map { $0.hasSuffix("-") ? String($0.dropLast()) : $0 }).subtracting(["--help", "--version"])
    }

    /// Whether `flag` occurs in `text` as a whole flag (`--bgm` is not found in `--bgm-volume`).
    static func mentions(_ text: String, flag: String) -> Bool {
        let pattern = "(?<![A-Za-z0-9-])" + NSRegularExpression.escapedPattern(for: flag) + "(?![A-Za-z0-9-])"
        return text.range(of: pattern, options: .regularExpression) != nil
    }

    func testEveryFlagOfEverySubcommandIsInTheCLIReference() throws {
        let subcommands = try Self.subcommands()
        // The parse above must have found them; an empty list would pass vacuously.
        XCTAssertTrue(Set(["push", "playout", "channels", "serve", "loopback", "sign", "verify"]).isSubset(of: Set(subcommands)),
                      "livepush --help lists \(subcommands)")
        let reference = try Self.read("docs/cli.md")
        var checked = 0
        for subcommand in subcommands {
            let help = try LivePushCLI.run(["help", subcommand])
            XCTAssertTrue(help.succeeded, help.summary)
            let flags = Self.flags(in: help.stdoutString)
            XCTAssertFalse(flags.isEmpty, "livepush help \(subcommand) printed no flag:\n\(help.stdoutString)")
            for flag in flags.sorted() where !Self.mentions(reference, flag: flag) {
                XCTFail("livepush \(subcommand) \(flag) is not in docs/cli.md")
            }
            checked += flags.count
        }
        XCTAssertGreaterThan(checked, 50)
    }

    func testTheFlagCheckNoticesAMissingFlag() {
        XCTAssertTrue(Self.mentions("[--bgm PATH|URL [--bgm-volume N]]", flag: "--bgm"))
        XCTAssertFalse(Self.mentions("[--bgm-volume N] [--bgm-loop]", flag: "--bgm"))
        XCTAssertEqual(Self.flags(in: "  --retry-count <n>  -h, --help  --record FILE.flv"), ["--retry-count", "--record"])
    }

    // MARK: - README

    func testTheReadmeIsShortAndOpensWithTheTwoCommands() throws {
        let readme = try Self.read("README.md")
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false)
        let count = readme.hasSuffix("\n") ? lines.count - 1 : lines.count
        XCTAssertLessThanOrEqual(count, 260, "README.md has \(count) lines; the reference belongs in docs/")
        XCTAssertTrue(readme.hasPrefix("# LivePush\n"))
        let block = try XCTUnwrap(readme.range(of: Self.openingCommands + "\n"), "README.md lost its opening commands")
        let before = readme[..<block.lowerBound]
        XCTAssertFalse(before.contains("```"), "the two commands must be the README's first block")
        XCTAssertEqual(before.split(separator: "\n").filter { $0.hasPrefix("#") }.count, 1, "only the title comes before the commands")
        XCTAssertLessThanOrEqual(before.split(separator: "\n", omittingEmptySubsequences: false).count, 8)
    }

    // MARK: - Links

    /// GitHub's anchor for a heading: lowercased, punctuation dropped, spaces to hyphens.
    static func anchor(_ heading: String) -> String {
        let kept = heading.lowercased().unicodeScalars.filter {
            CharacterSet.alphanumerics.contains($0) || $0 == " " || $0 == "-" || $0 == "_"
        }
        return String(kept).replacingOccurrences(of: " ", with: "-")
    }

    /// Markdown text without fenced blocks and code spans (where brackets are not links).
    static func prose(_ markdown: String) -> String {
        var out: [Substring] = []
        var fenced = false
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { fenced.toggle(); continue }
            if !fenced { out.append(line) }
        }
        return out.joined(separator: "\n").replacingOccurrences(of: "`[^`\n]*`", with: "", options: .regularExpression)
    }

    static func anchors(of markdown: String) -> Set<String> {
        var seen: [String: Int] = [:]
        var result = Set<String>()
        var fenced = false
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { fenced.toggle(); continue }
            guard !fenced, line.hasPrefix("#") else { continue }
            let base = anchor(line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces))
            let n = seen[base, default: 0]
            seen[base] = n + 1
            result.insert(n == 0 ? base : "\(base)-\(n)")
        }
        return result
    }

    func testEveryRelativeLinkReachesAFileAndItsAnchor() throws {
        let docs = try FileManager.default.contentsOfDirectory(atPath: Self.root.appendingPathComponent("docs").path)
            .filter { $0.hasSuffix(".md") }.map { "docs/" + $0 }
        XCTAssertGreaterThanOrEqual(docs.count, 5, "docs/ holds \(docs)")
        let link = try NSRegularExpression(pattern: #"\[[^\]]*\]\(([^)\s]+)\)"#)
        var checked = 0
        for file in ["README.md"] + docs.sorted() {
            let text = Self.prose(try Self.read(file))
            let directory = Self.root.appendingPathComponent(file).deletingLastPathComponent()
            for match in link.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let target = String(text[Range(match.range(at: 1), in: text)!])
                if target.contains("://") || target.hasPrefix("mailto:") { continue }
                let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
                let path = String(parts[0])
                let destination = path.isEmpty ? Self.root.appendingPathComponent(file)
                                               : directory.appendingPathComponent(path).standardizedFileURL
                checked += 1
                guard FileManager.default.fileExists(atPath: destination.path) else {
                    XCTFail("\(file): \(target) points to a file that does not exist"); continue
                }
                if parts.count == 2, destination.pathExtension == "md" {
                    let markdown = try String(contentsOf: destination, encoding: .utf8)
                    XCTAssertTrue(Self.anchors(of: markdown).contains(String(parts[1])),
                                  "\(file): \(target): no heading in \(destination.lastPathComponent) has that anchor")
                }
            }
        }
        XCTAssertGreaterThan(checked, 20)
    }

    func testTheAnchorsAreGitHubs() {
        XCTAssertEqual(Self.anchor("rtmps:// server verification"), "rtmps-server-verification")
        XCTAssertEqual(Self.anchor("Interactive mode: WebRTC (WHIP)"), "interactive-mode-webrtc-whip")
        XCTAssertEqual(Self.anchor("The embedded receiver's limits"), "the-embedded-receivers-limits")
    }

    // MARK: - The README's library example

    func testTheReadmeShowsTheExampleThatCompilesHere() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
        let begin = try XCTUnwrap(lines.firstIndex { $0.hasSuffix("// BEGIN README EXAMPLE") })
        let end = try XCTUnwrap(lines.firstIndex { $0.hasSuffix("// END README EXAMPLE") })
        let body = lines[(begin + 1)..<end].map { $0.hasPrefix("        ") ? String($0.dropFirst(8)) : String($0) }
        let example = "```swift\nimport LivePush\n\n" + body.joined(separator: "\n") + "\n```\n"
        XCTAssertTrue(try Self.read("README.md").contains(example), "README.md's library example is not:\n\(example)")
    }

    /// Never called: it would push to example.com. It is here to be compiled.
    static func readmeExample() async throws {
        // BEGIN README EXAMPLE
        final class Watcher: LivePusherInfoDelegate, LivePusherNetworkDelegate, LivePusherErrorDelegate {
            func pusherDidStart(_ pusher: LivePusher) { print("publishing") }
            func pusher(_ pusher: LivePusher, connectionLost error: LivePushError) { print("lost:", error.message) }
            func pusher(_ pusher: LivePusher, sdkError error: LivePushError) { print(error.code.rawValue, error.message) }
        }

        var config = PushConfig()
        config.pacing = .realTime                      // or .asFastAsPossible
        config.looping = .times(2)                     // or .forever
        config.recordPath = "show.flv"                 // also keep what is pushed
        let pusher = LivePusher(config: config)
        let watcher = Watcher()                        // delegates are held weakly
        pusher.infoDelegate = watcher
        pusher.networkDelegate = watcher
        pusher.errorDelegate = watcher

        let events = pusher.events()                   // the same events as an AsyncStream
        try pusher.start(file: "show.mp4", urls: ["rtmp://live.example.com/app/stream", "srt://backup.example.com:9000"])
        for await event in events where event.group == .network { print(event.name) }   // ends after `stopped`
        print(pusher.stats())                          // bitrate, fps, frames and bytes sent, drops, per output
        // END README EXAMPLE
    }
}
