/// Hands a non-Sendable value to exactly one other thread. The sender gives up all use of it.
struct UncheckedTransfer<Value>: @unchecked Sendable {
    let value: Value
}
