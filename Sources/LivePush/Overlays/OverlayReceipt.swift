import Synchronization

/// Where one accepted overlay change landed: filled by the producer when it draws the first
/// picture with the change, awaited by the caller (the control API answers with it). The caller
/// waits at most a bound: a push that draws no pictures (paused, audio only, a copied stream)
/// never fills it.
final class OverlayReceipt: Sendable {
    private struct State {
        var applied: OverlayApplied?
        var expired = false
        var waiters: [CheckedContinuation<OverlayApplied?, Never>] = []
    }
    private let state = Mutex(State())

    /// The change is on the picture described by `applied`.
    func fulfil(_ applied: OverlayApplied) {
        let waiters = state.withLock { state -> [CheckedContinuation<OverlayApplied?, Never>] in
            guard state.applied == nil else { return [] }
            state.applied = applied
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: applied) }
    }

    /// What landed so far (nil: not drawn yet).
    var applied: OverlayApplied? { state.withLock { $0.applied } }

    /// Waits until the change is drawn, or `timeout` passes (nil then).
    func wait(upTo timeout: Duration) async -> OverlayApplied? {
        if let applied { return applied }
        return await withTaskGroup(of: OverlayApplied?.self) { group in
            group.addTask { await self.next() }
            group.addTask {
                try? await Task.sleep(for: timeout)
                self.expire()
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first ?? self.applied
        }
    }

    private func next() async -> OverlayApplied? {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> OverlayApplied?? in
                if let applied = state.applied { return .some(applied) }
                if state.expired { return .some(nil) }
                state.waiters.append(continuation)
                return .none
            }
            if case .some(let result) = now { continuation.resume(returning: result) }
        }
    }

    /// The wait's bound passed: every waiter goes on without the answer.
    private func expire() {
        let waiters = state.withLock { state -> [CheckedContinuation<OverlayApplied?, Never>] in
            state.expired = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: nil) }
    }
}
