@testable import LivePush
import XCTest

/// The pure parts of an ICE restart by PATCH (RFC 9725 §4.4): the endpoint's answer read and
/// bounded, the fragment we send, and the path watch that says when a restart is due.
final class WHIPICERestartTests: XCTestCase {
    private let sessionAnswer = "v=0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\na=ice-ufrag:old1\r\na=ice-pwd:oldoldoldoldoldoldoldold\r\n"
        + "a=candidate:1 1 udp 2130706431 10.0.0.1 5000 typ host\r\n"

    func testTheAnswerGivesNewCredentialsAndItsCandidates() throws {
        let fragment = "m=video 9 UDP/TLS/RTP/SAVPF 96\r\na=mid:0\r\na=ice-ufrag:n3w+\r\na=ice-pwd:abcdefghijklmnopqrstu/v\r\n"
            + "a=candidate:2 1 udp 2130706431 10.0.0.2 6000 typ host\r\na=end-of-candidates\r\n"
        let answer = try XCTUnwrap(ICERestartAnswer(fragment: fragment, sessionAnswer: sessionAnswer))
        XCTAssertEqual(answer.ufrag, "n3w+")
        XCTAssertEqual(answer.password, "abcdefghijklmnopqrstu/v")
        XCTAssertEqual(answer.candidates, ["candidate:2 1 udp 2130706431 10.0.0.2 6000 typ host"])
    }

    /// An endpoint that restarts on the same sockets need not repeat its candidates.
    func testAnAnswerWithoutCandidatesKeepsTheSessions() throws {
        let answer = try XCTUnwrap(ICERestartAnswer(fragment: "a=ice-ufrag:abcd\na=ice-pwd:abcdefghijklmnopqrstuv\n",
                                                    sessionAnswer: sessionAnswer))
        XCTAssertEqual(answer.candidates, ["candidate:1 1 udp 2130706431 10.0.0.1 5000 typ host"])
    }

    /// RFC 8839: ice-char only, ufrag 4 to 256, pwd 22 to 256; anything else is no answer.
    func testCredentialsOutsideRFC8839AreRefused() {
        for (ufrag, pwd) in [("abc", "abcdefghijklmnopqrstuv"), ("abcd", "short"), ("ab d", "abcdefghijklmnopqrstuv"),
                             ("abcd", "abcdefghijklmnopqrstu\u{7F}"), ("abcd", String(repeating: "a", count: 257)),
                             ("ab;d", "abcdefghijklmnopqrstuv")] {
            XCTAssertNil(ICERestartAnswer(fragment: "a=ice-ufrag:\(ufrag)\r\na=ice-pwd:\(pwd)\r\n", sessionAnswer: ""), "\(ufrag) \(pwd)")
        }
        XCTAssertNil(ICERestartAnswer(fragment: "a=ice-pwd:abcdefghijklmnopqrstuv\r\n", sessionAnswer: ""), "no ufrag")
    }

    /// Candidates are bounded: printable ASCII, at most 512 bytes each, at most 64.
    func testCandidatesAreBounded() throws {
        var fragment = "a=ice-ufrag:abcd\r\na=ice-pwd:abcdefghijklmnopqrstuv\r\n"
        fragment += "a=candidate:" + String(repeating: "x", count: 600) + "\r\n"
        fragment += "a=candidate:1 1 udp 1 10.0.0.3 7000 typ host\u{1B}[2J\r\n"
        for i in 0..<100 { fragment += "a=candidate:\(i) 1 udp 1 10.0.0.4 \(7000 + i) typ host\r\n" }
        let answer = try XCTUnwrap(ICERestartAnswer(fragment: fragment, sessionAnswer: ""))
        XCTAssertEqual(answer.candidates.count, ICERestartAnswer.maxCandidates)
        XCTAssertEqual(answer.candidates.first, "candidate:0 1 udp 1 10.0.0.4 7000 typ host")
    }

    func testTheRestartFragmentCarriesTheNewCredentials() throws {
        let offer = "v=0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\na=ice-ufrag:old1\r\na=ice-pwd:oldoldoldoldoldoldoldold\r\na=mid:0\r\n"
        let fragment = try XCTUnwrap(TrickleFragment(offer: offer)).restarted(ufrag: "n3w1", password: "abcdefghijklmnopqrstuv")
        XCTAssertEqual(fragment.body(candidates: ["candidate:1 1 udp 1 10.0.0.1 5000 typ host"], end: true),
                       "m=video 9 UDP/TLS/RTP/SAVPF 96\r\na=mid:0\r\na=ice-ufrag:n3w1\r\na=ice-pwd:abcdefghijklmnopqrstuv\r\n"
                       + "a=candidate:1 1 udp 1 10.0.0.1 5000 typ host\r\na=end-of-candidates\r\n")
    }

    // MARK: - The path watch

    /// Reports that move say connected; reports that stand still for 3 s while we send say lost.
    func testReportsThatStandStillWhileWeSendAreALostPath() {
        var watch = WHIPPathWatch()
        XCTAssertEqual(watch.observe(highestSequence: 100, packetsSent: 100, now: 0), .connected)
        XCTAssertEqual(watch.observe(highestSequence: 150, packetsSent: 150, now: 1_000_000), .connected)
        XCTAssertEqual(watch.observe(highestSequence: 150, packetsSent: 200, now: 2_000_000), .checking)
        XCTAssertEqual(watch.observe(highestSequence: 150, packetsSent: 250, now: 3_999_999), .checking)
        XCTAssertEqual(watch.observe(highestSequence: 150, packetsSent: 300, now: 4_000_000), .lost)
        XCTAssertEqual(watch.observe(highestSequence: 151, packetsSent: 350, now: 5_000_000), .connected, "back")
    }

    /// Sending nothing is no reason for the reports to move.
    func testNothingSentIsNoLoss() {
        var watch = WHIPPathWatch()
        _ = watch.observe(highestSequence: 100, packetsSent: 100, now: 0)
        XCTAssertEqual(watch.observe(highestSequence: 100, packetsSent: 105, now: 10_000_000), .checking)
    }

    /// An endpoint that never sent a report is judged by ICE alone.
    func testNoReportYetIsNoJudgement() {
        var watch = WHIPPathWatch()
        XCTAssertEqual(watch.observe(highestSequence: 0, packetsSent: 500, now: 0), .checking)
        XCTAssertEqual(watch.observe(highestSequence: 0, packetsSent: 5_000, now: 60_000_000), .checking)
        XCTAssertFalse(watch.judges)
    }

    /// After a restart the reports get a fresh window.
    func testARestartGivesTheReportsAFreshWindow() {
        var watch = WHIPPathWatch()
        _ = watch.observe(highestSequence: 100, packetsSent: 100, now: 0)
        XCTAssertEqual(watch.observe(highestSequence: 100, packetsSent: 300, now: 5_000_000), .lost)
        watch.restarted(now: 6_000_000)
        XCTAssertEqual(watch.observe(highestSequence: 100, packetsSent: 400, now: 8_000_000), .checking)
        XCTAssertEqual(watch.observe(highestSequence: 100, packetsSent: 500, now: 9_000_000), .lost)
    }
}
