import Foundation
import XCTest

/// `docs/how-it-works.md` draws the source layout; this holds it to the tree: every folder of
/// the library and every C module is there, and every type it names has a file, so a rename or
/// a new folder that the page does not follow fails here.
final class LayoutDocTests: XCTestCase {
    /// Words in the layout that are not LivePush types: C types, tools, products.
    static let notTypes: Set<String> = ["AVFrame", "MPEGTS", "SwiftNIO", "StatefulSet", "Kubernetes", "Hummingbird",
                                        "DocC", "FFmpeg", "GnuTLS", "WebRTC"]

    static func layoutBlock() throws -> (text: String, lines: [Substring]) {
        let page = try DocsTests.read("docs/how-it-works.md")
        let layout = try XCTUnwrap(page.range(of: "## Layout")).upperBound
        let rest = page[layout...]
        let open = try XCTUnwrap(rest.range(of: "```\n"))
        let close = try XCTUnwrap(rest[open.upperBound...].range(of: "\n```"))
        let block = rest[open.upperBound..<close.lowerBound]
        return (String(block), block.split(separator: "\n"))
    }

    static func directories(in relativePath: String) throws -> [String] {
        let url = DocsTests.root.appendingPathComponent(relativePath)
        return try FileManager.default.contentsOfDirectory(atPath: url.path).filter { name in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: url.appendingPathComponent(name).path, isDirectory: &isDirectory)
                && isDirectory.boolValue
        }.sorted()
    }

    /// The names of every Swift file (without `.swift` and any `+Extension`) under Sources and Tests.
    static func swiftFileNames() -> Set<String> {
        var names: Set<String> = []
        for top in ["Sources", "Tests"] {
            let enumerator = FileManager.default.enumerator(atPath: DocsTests.root.appendingPathComponent(top).path)
            while let path = enumerator?.nextObject() as? String {
                guard path.hasSuffix(".swift") else { continue }
                let file = (path as NSString).lastPathComponent.dropLast(".swift".count)
                names.insert(String(file.split(separator: "+").first ?? file))
            }
        }
        return names
    }

    func testEveryFolderAndCModuleIsInTheLayout() throws {
        let (text, lines) = try Self.layoutBlock()
        for folder in try Self.directories(in: "Sources/LivePush") where !folder.hasSuffix(".docc") {
            XCTAssertTrue(lines.contains { $0.hasPrefix("Sources/LivePush/\(folder) ") },
                          "Sources/LivePush/\(folder) has no line in how-it-works.md's layout")
        }
        for module in try Self.directories(in: "Sources") where module.hasPrefix("C") {
            XCTAssertTrue(text.contains("Sources/\(module)"), "the C module \(module) is not named in the layout")
        }
    }

    func testEveryTypeTheLayoutNamesHasAFile() throws {
        let (text, _) = try Self.layoutBlock()
        let files = Self.swiftFileNames()
        // UpperCamelCase words with two humps or more (VideoFrame, RTMPSession), not paths or flags.
        let regex = try NSRegularExpression(pattern: #"(?<![A-Za-z0-9/._-])[A-Z][A-Za-z0-9]*[a-z][A-Z][A-Za-z0-9]*(?![A-Za-z0-9/.-])"#)
        let words = regex.matches(in: text, range: NSRange(text.startIndex..., in: text))
            .compactMap { Range($0.range, in: text).map { String(text[$0]) } }
        XCTAssertGreaterThan(words.count, 50, "the layout names the types")
        let modules = Set(try Self.directories(in: "Sources"))
        for word in Set(words).subtracting(Self.notTypes).subtracting(modules).sorted() {
            XCTAssertTrue(files.contains(word), "how-it-works.md's layout names \(word), which has no \(word).swift")
        }
    }

    /// The check above can fail: a name with no file is found.
    func testAStaleNameIsNoticed() {
        XCTAssertFalse(Self.swiftFileNames().contains("PushSession"))
        XCTAssertTrue(Self.swiftFileNames().contains("PushEngine"))
    }
}
