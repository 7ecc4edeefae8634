// example-playout-control: a playout channel that the app changes while it is on air.
//
//     example-playout-control CONTENT INSERT URL
//                                    e.g. example-playout-control show.mp4 promo.mp4 rtmp://127.0.0.1/live/ch
//
// The channel plays 4 s of CONTENT. A second in, the app puts 1 s of INSERT on air now (the
// content is cut and resumes where it stood), appends 2 s of INSERT to the content, and skips
// that one half a second after it started. The pictures: CONTENT 0-1 s, INSERT 0-1 s,
// CONTENT 1-4 s, INSERT 0-0.5 s (about: the skip prints the media time it came at). Exits 0 when the channel played exactly that and ended well.
//
// Why the library and not the HTTP endpoint: an app that links LivePush holds the channel's
// `PlayoutControl` itself, and its methods are what `livepush playout --control HOST:PORT`
// serves over HTTP (`POST /schedule-now` is `scheduleNow`, `/append` is `appendContent`,
// `/skip` is `skip`; see the README's playout section). That endpoint lives in the CLI, for a
// process outside; an app has no reason to talk HTTP to itself.
import Foundation
import LivePush

let arguments = CommandLine.arguments
guard arguments.count == 4 else {
    print("usage: example-playout-control CONTENT INSERT URL")
    exit(2)
}
let (content, insert, url) = (arguments[1], arguments[2], arguments[3])

// The schedule: one content clip (ids name the entries in events and in the timeline).
let schedule = PlayoutSchedule(content: [.init(id: "main", source: content, in: 0, out: 4)])
var options = PlayoutOptions()
(options.width, options.height) = (320, 240)  // the channel's format: every entry is encoded to it

let pusher = LivePusher(config: PushConfig())
let events = pusher.events()  // subscribe before `start`, so no event is missed
let control: PlayoutControl
do {
    control = try pusher.start(playout: schedule, options: options, urls: [url])
} catch {
    print("cannot start: \(error)")  // e.g. scheduleInvalid: nothing was pushed
    exit(1)
}

// A watchdog, so that the example never hangs: the channel is about 5.5 s long.
Thread.detachNewThread {
    Thread.sleep(forTimeInterval: 40)
    print("the channel did not end within 40 s")
    exit(1)
}

// Adds to the main content: it plays after "main". Checked at once (`scheduleInvalid` if not valid).
do {
    try control.appendContent(.init(id: "extra", source: insert, in: 0, out: 2))
} catch {
    print("cannot append: \(error)")
    exit(1)
}

// React to the channel's events: the control calls are safe from any thread, and the sleeps
// are in tasks of their own so that the loop keeps reading events.
var started: [String] = []
for await event in events {
    guard case .playout(let playout) = event else {
        if event.error != nil || event.name == "pushStarted" { print(event.name, event.error.map { "\($0)" } ?? "") }
        continue
    }
    switch playout {
    case .entryStarted(let entry):
        print("on air: \(entry.id) (\(entry.kind), \(entry.inPoint)-\(entry.outPoint) s)")
        started.append(entry.id)
        if started == ["main"] {
            Task {
                try await Task.sleep(for: .seconds(1))
                control.scheduleNow(.init(id: "now", source: insert, in: 0, out: 1))
            }
        }
        if entry.id == "extra" {
            Task {
                try await Task.sleep(for: .milliseconds(500))
                // Where the channel stands is its media time, not the wall clock's: a busy
                // machine may have sent less than the half second slept.
                let sent = Double(pusher.stats().mediaTimeSent) / 1_000_000
                print("skipping \(control.currentEntry?.id ?? "nothing") at \(String(format: "%.3f", sent)) s of media sent")
                control.skip()
            }
        }
    case .entryFailed(let entry, let error):
        print("entry \(entry.id) failed, the slate stands in: \(error)")
    default:
        print(playout.name)
    }
}

if case .failed(let error) = pusher.state {
    print("the channel failed: \(error)")
    exit(1)
}
let expected = ["main", "now", "main", "extra"]
guard started == expected else {
    print("expected \(expected) on air, got \(started)")
    exit(1)
}
print("played \(started.joined(separator: ", "))")
