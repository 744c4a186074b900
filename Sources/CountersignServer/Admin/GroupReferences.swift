import Foundation

/// The groups a client's or RADIUS client's policy names. An administrator names a group by its
/// name or its id; the policy keeps the id, so that a group renamed (in the directory, say) keeps
/// its place in every policy, and a new group given a deleted group's name gains nothing. A
/// policy naming a group that has since been deleted admits nobody through it.
enum GroupReferences {
    /// The ids of the groups `references` name, each once, in order; a reference that names
    /// no group of the tenant is `AdminError.invalidField(field, …)`.
    static func resolve(
        _ references: [String], tenantID: String, field: String, on executor: any SQLExecutor
    ) async throws -> [String] {
        let groups = SQLGroupRepository()
        var ids: [String] = []
        for reference in references {
            var found = try await groups.find(id: reference, tenantID: tenantID, on: executor)
            if found == nil { found = try await groups.find(name: reference, tenantID: tenantID, on: executor) }
            guard let found else { throw AdminError.invalidField(field, "names no group of the tenant: \(reference)") }
            if !ids.contains(found.id) { ids.append(found.id) }
        }
        return ids
    }

    /// The ids of the groups `userID` is in.
    static func groupIDs(of userID: String, on executor: any SQLExecutor) async throws -> Set<String> {
        Set(try await SQLGroupRepository().groups(userID: userID, on: executor).map(\.id))
    }
}
