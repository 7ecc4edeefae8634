import LivePush
import XCTest

/// What `serve` prints of a peer's FourCC and names: the sequences a hostile peer would send
/// come out escaped (C0 and C1 controls alike) and cut to the limit.
final class TerminalTextPeerSequenceTests: XCTestCase {
    func testTerminalSequencesInAFourCCAreEscaped() {
        XCTAssertEqual(TerminalText.escape("\u{1B}[2J", limit: 16), "\\x1b[2J")
        XCTAssertEqual(TerminalText.escape("\u{1B}]0;", limit: 16), "\\x1b]0;")
        XCTAssertEqual(TerminalText.escape("\u{9B}2J", limit: 16), "\\x9b2J", "C1 CSI")
        XCTAssertEqual(TerminalText.escape("\u{85}\u{9D}\u{7F}", limit: 16), "\\x85\\x9d\\x7f")
    }

    func testTheLengthIsCapped() {
        let escaped = TerminalText.escape(String(repeating: "a", count: 100), limit: 16)
        XCTAssertEqual(escaped, String(repeating: "a", count: 16) + "…")
    }
}
