/// When a WHIP session PATCHes its resource (RFC 9725 §4.3): trickle ICE and ICE restarts.
/// Pure: it is told what happened (candidates gathered, what a PATCH came to, ICE's state, a
/// network change) and the time, and returns what to do; the driver (``PushOutput`` while it
/// connects) does the HTTP and the waiting.
///
/// Trickle ICE (RFC 8840): the offer is POSTed at once, with the candidates it has; those
/// gathered afterwards go by PATCH, batched (a candidate waits at most ``batchWindow`` for
/// others to join it, a PATCH holds at most ``maxCandidatesPerPatch``), then one
/// `a=end-of-candidates`. At most ``maxCandidates`` go in all: a host with more addresses than
/// that has its later ones left out. An endpoint that answers 405 or 501 does no trickle ICE:
/// no more PATCHes, and no failure (ICE works from the offer's candidates and the checks);
/// one that fails a PATCH otherwise (412, 5xx, a timeout) is not PATCHed again either.
///
/// ICE restart (RFC 9725 §4.4): when ICE has been failed or disconnected for ``restartAfter``,
/// or the app reported a network change, one restart is due: a new offer's ICE credentials by
/// PATCH. An endpoint that refuses it (405, 501, or any failure) gets a new POST instead, as
/// does a session whose ``maxRestarts`` restarts did not bring ICE back. A PATCH that cannot
/// reach the endpoint (the link is down) is tried again after ``restartAfter``, within that budget. Trickling is driven
/// while the output connects (``PushOutput``), restarts once it publishes (``WHIPICERestarts``).
struct WHIPPatchStateMachine: Sendable, Equatable {
    /// What the driver does now.
    enum Decision: Sendable, Equatable {
        /// PATCH these candidates (`a=` lines' values), then `a=end-of-candidates` if `end`.
        case trickle(candidates: [String], end: Bool)
        /// Restart ICE: a new offer with new credentials, by PATCH.
        case restartICE
        /// The session is lost for PATCH: a new POST (the output's reconnect).
        case repost
        /// Nothing before `until` (µs, on the caller's clock; nil: until something happens).
        case wait(until: Int64?)
    }

    /// What a PATCH came to.
    enum Outcome: Sendable, Equatable {
        case applied
        /// 405 or 501: the endpoint does not do it.
        case notSupported
        /// Anything else: a refusal, a bad answer.
        case failed
        /// The PATCH never reached the endpoint (no route, connect refused or timed out, the
        /// connection lost): the network itself is down, so the restart is tried again later.
        case unreachable
    }

    /// ICE as webrtcbin reports it, as far as the decisions go.
    enum ICE: Sendable, Equatable { case checking, connected, lost }

    static let batchWindow: Int64 = 50_000
    static let maxCandidatesPerPatch = 16
    static let maxCandidates = 64
    /// How long ICE may stay failed or disconnected before a restart: consent freshness
    /// (RFC 7675) declares a path dead after 30 s without answers, webrtcbin's disconnected
    /// comes after a few seconds; 2 s more rides out a passing blip.
    static let restartAfter: Int64 = 2_000_000
    /// Restarts tried before a new POST, those that could not reach the endpoint included: at
    /// ``restartAfter`` apart, a cut of some 10 s is ridden out.
    static let maxRestarts = 5

    private(set) var trickling: Bool
    private var pending: [String] = []
    private var pendingSince: Int64?
    private var sentCandidates = 0
    private var gatheringEnded = false
    private var endSent = false
    /// Candidates left out (beyond ``maxCandidates``), for the log.
    private(set) var dropped = 0

    private var lostSince: Int64?
    private var networkChanged = false
    private var restartInFlight = false
    private var repostDue = false
    private(set) var restarts = 0

    /// `trickle`: the offer went before gathering ended (false: it carried every candidate).
    init(trickle: Bool) {
        trickling = trickle
    }

    /// Whether trickling has nothing left to send: gathering ended and said so, or no trickle.
    var trickleDone: Bool { !trickling || (endSent && pending.isEmpty) }

    // MARK: - Events

    mutating func gathered(_ candidate: String, now: Int64) {
        guard trickling, !endSent else { return }
        guard sentCandidates + pending.count < Self.maxCandidates else {
            dropped += 1
            return
        }
        if pending.isEmpty { pendingSince = now }
        pending.append(candidate)
    }

    mutating func gatheringComplete() {
        gatheringEnded = true
    }

    /// What the last ``Decision/trickle(candidates:end:)`` PATCH came to.
    mutating func trickled(_ outcome: Outcome) {
        guard outcome != .applied else { return }
        trickling = false
        pending = []
        pendingSince = nil
    }

    mutating func ice(_ state: ICE, now: Int64) {
        switch state {
        case .lost: if lostSince == nil { lostSince = now }
        case .connected:
            lostSince = nil
            restarts = 0
        case .checking: break
        }
    }

    /// The app said the network changed (its `networkChanged`): the path may be gone.
    mutating func networkDidChange() {
        networkChanged = true
    }

    /// What the last ``Decision/restartICE`` PATCH came to.
    mutating func restarted(_ outcome: Outcome, now: Int64) {
        restartInFlight = false
        if outcome == .unreachable {
            // A cut link takes the signalling with it: the restart is due again once
            // ``restartAfter`` has passed, within the same budget of ``maxRestarts``.
            lostSince = now
            return
        }
        guard outcome == .applied else {
            repostDue = true
            return
        }
        // The new credentials get their own time to connect: the loss is counted again from
        // the next time the driver reports it (ICE failed again, or its path watch's fresh
        // window ran out), not from the first loss, so a restart is not repeated while its
        // checks and the endpoint's next receiver report are on their way.
        lostSince = nil
    }

    // MARK: - Decision

    mutating func next(now: Int64) -> Decision {
        if repostDue { return .repost }
        if !restartInFlight, networkChanged || lostSince.map({ now - $0 >= Self.restartAfter }) == true {
            guard restarts < Self.maxRestarts else {
                repostDue = true
                return .repost
            }
            networkChanged = false
            restartInFlight = true
            restarts += 1
            return .restartICE
        }
        if trickling, !pending.isEmpty {
            let full = pending.count >= Self.maxCandidatesPerPatch
            let due = (pendingSince ?? now) + Self.batchWindow
            if full || gatheringEnded || now >= due {
                let batch = Array(pending.prefix(Self.maxCandidatesPerPatch))
                pending.removeFirst(batch.count)
                pendingSince = pending.isEmpty ? nil : now
                sentCandidates += batch.count
                let end = gatheringEnded && pending.isEmpty
                if end { endSent = true }
                return .trickle(candidates: batch, end: end)
            }
            return .wait(until: due)
        }
        if trickling, gatheringEnded, !endSent {
            endSent = true
            return .trickle(candidates: [], end: true)
        }
        if let lostSince, !restartInFlight { return .wait(until: lostSince + Self.restartAfter) }
        return .wait(until: nil)
    }
}
