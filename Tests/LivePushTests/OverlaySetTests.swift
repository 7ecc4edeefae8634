@testable import LivePush
import XCTest

/// The overlay set's decisions: which changes are accepted, from which picture each applies,
/// and how opaque an overlay is at a time (its fades).
final class OverlaySetTests: XCTestCase {
    private func text(_ id: String, _ value: String = "LIVE", fadeIn: Duration = .zero, fadeOut: Duration = .zero,
                      opacity: Double = 1) -> Overlay {
        Overlay(id: id, content: .text(value), x: 10, y: 20, size: 32, opacity: opacity, fadeIn: fadeIn, fadeOut: fadeOut)
    }

    func testAcceptChecksIdsAndLimits() throws {
        var set = OverlaySet()
        try set.accept(.add(text("a")))
        XCTAssertThrowsError(try set.accept(.add(text("a")))) { XCTAssertEqual(($0 as? LivePushError)?.code, .overlayInvalid) }
        XCTAssertThrowsError(try set.accept(.update(text("b")))) { XCTAssertEqual(($0 as? LivePushError)?.code, .overlayNotFound) }
        XCTAssertThrowsError(try set.accept(.remove(id: "b"))) { XCTAssertEqual(($0 as? LivePushError)?.code, .overlayNotFound) }
        for n in 1..<Overlay.maxLive { try set.accept(.add(text("n\(n)"))) }
        XCTAssertThrowsError(try set.accept(.add(text("one-too-many")))) { XCTAssertEqual(($0 as? LivePushError)?.code, .overlayInvalid) }
        try set.accept(.remove(id: "a"))
        try set.accept(.add(text("again")))
        XCTAssertEqual(set.requested.count, Overlay.maxLive)
    }

    func testValidationNamesTheField() {
        let cases: [(Overlay, String)] = [
            (Overlay(id: "bad id", content: .text("x"), x: 0, y: 0), "\"id\""),
            (Overlay(id: String(repeating: "a", count: 65), content: .text("x"), x: 0, y: 0), "\"id\""),
            (Overlay(id: "t", content: .text(""), x: 0, y: 0), "\"text\""),
            (Overlay(id: "t", content: .text(String(repeating: "x", count: 257)), x: 0, y: 0), "\"text\""),
            (Overlay(id: "t", content: .text("a\nb"), x: 0, y: 0), "\"text\""),
            (Overlay(id: "t", content: .text("x"), x: 9000, y: 0), "\"x\""),
            (Overlay(id: "t", content: .text("x"), x: 0, y: 0, size: 4), "\"size\""),
            (Overlay(id: "t", content: .image(path: "/l.png"), x: 0, y: 0, size: 5000), "\"size\""),
            (Overlay(id: "t", content: .text("x"), x: 0, y: 0, opacity: 1.5), "\"opacity\""),
            (Overlay(id: "t", content: .text("x"), x: 0, y: 0, fadeIn: .seconds(61)), "\"fadeIn\""),
        ]
        for (overlay, field) in cases {
            XCTAssertThrowsError(try overlay.validate(), "\(overlay)") { error in
                XCTAssertEqual((error as? LivePushError)?.code, .overlayInvalid)
                XCTAssertTrue((error as? LivePushError)?.detail?.contains(field) == true, "\(error) names \(field)")
            }
        }
    }

    func testChangesApplyFromTheirPicture() {
        var set = OverlaySet()
        XCTAssertTrue(set.visible(at: 0).isEmpty)
        set.apply(.add(text("a")), at: 40_000)
        XCTAssertEqual(set.visible(at: 40_000).map(\.alpha), [256])
        set.apply(.update(text("a", "CHANGED")), at: 80_000)
        XCTAssertEqual(set.visible(at: 80_000).first?.item.overlay.content, .text("CHANGED"))
        XCTAssertEqual(set.visible(at: 80_000).first?.item.since, 40_000, "an update keeps the overlay's start")
        set.apply(.remove(id: "a"), at: 120_000)
        XCTAssertTrue(set.visible(at: 120_000).isEmpty, "no fade-out: gone at the removal's picture")
        XCTAssertTrue(set.isEmpty)
    }

    func testFadesAtTimes() {
        var set = OverlaySet()
        set.apply(.add(text("f", fadeIn: .seconds(1), fadeOut: .milliseconds(500), opacity: 0.5)), at: 1_000_000)
        XCTAssertTrue(set.visible(at: 1_000_000).isEmpty, "transparent at the fade-in's start")
        XCTAssertEqual(set.visible(at: 1_500_000).first?.alpha, 64)     // 0.5 × 0.5
        XCTAssertEqual(set.visible(at: 2_000_000).first?.alpha, 128)
        XCTAssertEqual(set.visible(at: 9_000_000).first?.alpha, 128)
        set.apply(.remove(id: "f"), at: 10_000_000)
        XCTAssertEqual(set.visible(at: 10_000_000).first?.alpha, 128)
        XCTAssertEqual(set.visible(at: 10_250_000).first?.alpha, 64)
        XCTAssertTrue(set.visible(at: 10_500_000).isEmpty)
        XCTAssertTrue(set.isEmpty, "forgotten once faded out")
    }

    func testAddWhileFadingOutReplaces() {
        var set = OverlaySet()
        set.apply(.add(text("f", fadeOut: .seconds(1))), at: 0)
        set.apply(.remove(id: "f"), at: 100_000)
        set.apply(.add(text("f", "NEW")), at: 200_000)
        XCTAssertEqual(set.visible(at: 200_000).map(\.item.overlay.content), [.text("NEW")])
    }

    func testEntryOverlaysLastTheirEntry() {
        var set = OverlaySet()
        set.apply(.add(text("live")), at: 0)
        set.enterEntry([text("logo")], at: 1_000_000)
        XCTAssertEqual(set.visible(at: 1_000_000).map(\.item.overlay.id), ["logo", "live"], "entry overlays under the live ones")
        set.enterEntry([], at: 3_000_000)
        XCTAssertEqual(set.visible(at: 3_000_000).map(\.item.overlay.id), ["live"])
        set.enterEntry((0..<20).map { text("e\($0)") }, at: 4_000_000)
        XCTAssertEqual(set.items.filter { $0.scope == .entry }.count, Overlay.maxPerEntry)
    }

    func testRestartKeepsWhatIsShownWithoutFade() {
        var set = OverlaySet()
        set.apply(.add(text("a", fadeIn: .seconds(2))), at: 5_000_000)
        set.enterEntry([text("logo")], at: 5_000_000)
        set.restart()
        XCTAssertEqual(set.visible(at: 0).map(\.item.overlay.id), ["a"])
        XCTAssertEqual(set.visible(at: 0).first?.alpha, 256)
    }

    func testClockText() {
        XCTAssertEqual(OverlayStage.clockText(.media, at: 3_723_500_000, wallOrigin: 0), "01:02:03")
        // 2026-11-27T10:00:00Z plus 90.2 s of media.
        XCTAssertEqual(OverlayStage.clockText(.wall, at: 90_200_000, wallOrigin: 1_795_773_600_000_000), "10:01:30")
    }

    func testColorsAndJSON() throws {
        XCTAssertEqual(OverlayColor(hex: "#ff000080"), OverlayColor(red: 255, green: 0, blue: 0, alpha: 128))
        XCTAssertEqual(OverlayColor(hex: "#00FF00")?.hex, "#00FF00FF")
        XCTAssertNil(OverlayColor(hex: "red"))
        let json = Data(##"{"id": "t1", "text": "LIVE 42", "x": 40, "y": 30, "size": 40, "background": "#000000", "fadeIn": 0.5}"##.utf8)
        let overlay = try Overlay.decode(json: json) { $0 }
        XCTAssertEqual(overlay.content, .text("LIVE 42"))
        XCTAssertEqual(overlay.fadeIn, .milliseconds(500))
        let patched = try Overlay.decode(json: Data(#"{"x": 100}"#.utf8), base: overlay) { $0 }
        XCTAssertEqual(patched.x, 100)
        XCTAssertEqual(patched.content, overlay.content)
        for bad in [#"{"id": "t", "text": "x", "x": 1}"#, #"{"id": "t", "text": "x", "image": "a.png", "x": 1, "y": 1}"#,
                    ##"{"id": "t", "text": "x", "x": 1, "y": 1, "colour": "#fff"}"##, #"{"id": "t", "clock": "local", "x": 1, "y": 1}"#,
                    #"{"id": "t/..", "text": "x", "x": 1, "y": 1}"#, #"[1]"#] {
            XCTAssertThrowsError(try Overlay.decode(json: Data(bad.utf8)) { $0 }, bad) {
                XCTAssertEqual(($0 as? LivePushError)?.code, .overlayInvalid, bad)
            }
        }
        XCTAssertThrowsError(try Overlay.decode(json: Data(#"{"id": "other"}"#.utf8), base: overlay) { $0 })
    }

    func testScheduleEntryOverlays() throws {
        let json = #"{"content": [{"id": "a", "source": "a.mp4", "in": 0, "out": 2, "overlays": [{"id": "logo", "image": "logo.png", "x": 8, "y": 8}]}]}"#
        let schedule = try PlayoutSchedule(json: Data(json.utf8), relativeTo: "/media")
        XCTAssertEqual(schedule.content[0].overlays.first?.content, .image(path: "/media/logo.png"))
        let bad = #"{"content": [{"id": "a", "source": "a.mp4", "in": 0, "out": 2, "overlays": [{"id": "logo", "x": 8, "y": 8}]}]}"#
        XCTAssertThrowsError(try PlayoutSchedule(json: Data(bad.utf8))) { error in
            XCTAssertEqual((error as? LivePushError)?.code, .scheduleInvalid)
            XCTAssertTrue("\(error)".contains("overlays"))
        }
    }
}
