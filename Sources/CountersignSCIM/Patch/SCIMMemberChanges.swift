/// What a PATCH did to a group's members, as a change storage can apply without rewriting (or
/// even loading) a group of ten thousand members: first remove all if `removesAll`, then remove
/// `removed`, then add `added`. `added` and `removed` never share an id.
///
/// Computed from the operations alone, in their order: adding a member and then removing it
/// leaves it only in `removed`; removing one that was never a member is no error, which is what
/// Entra ID expects when it repeats a removal.
public struct SCIMMemberChanges: Sendable, Hashable {
    /// Whether every member was removed first (`remove` of `members` without a value, or a
    /// `replace` of them).
    public private(set) var removesAll = false
    /// Members to add, in the order they were sent, each once.
    public private(set) var added: [SCIMMember] = []
    /// Ids of members to remove, in the order they were sent, each once.
    public private(set) var removed: [String] = []

    public init() {}

    public var isEmpty: Bool { !removesAll && added.isEmpty && removed.isEmpty }

    mutating func add(_ members: [SCIMMember]) {
        let ids = Set(members.map(\.value))
        removed.removeAll { ids.contains($0) }
        var present = Set(added.map(\.value))
        for member in members where present.insert(member.value).inserted {
            added.append(member)
        }
    }

    mutating func remove(_ ids: [String]) {
        let listed = Set(ids)
        added.removeAll { listed.contains($0.value) }
        var present = Set(removed)
        for id in ids where present.insert(id).inserted {
            removed.append(id)
        }
    }

    mutating func removeAll() {
        removesAll = true
        added = []
        removed = []
    }

    /// `members` after these changes.
    public func applied(to members: [SCIMMember]) -> [SCIMMember] {
        let gone = Set(removed)
        var result = removesAll ? [] : members.filter { !gone.contains($0.value) }
        var present = Set(result.map(\.value))
        for member in added where present.insert(member.value).inserted {
            result.append(member)
        }
        return result
    }
}
