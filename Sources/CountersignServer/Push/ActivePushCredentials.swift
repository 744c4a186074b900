import CountersignCore
import Foundation

/// Where `PushSenders` finds the credential a tenant sends with through a provider.
protocol ActivePushCredentials: Sendable {
    /// The tenant's active credential for `provider` and its sealed secret; nil if it has none.
    func active(tenantID: String, provider: PushRegistration.Provider) async throws -> (PushCredential, Data)?
}

/// The active credentials on the server's database.
struct SQLActivePushCredentials: ActivePushCredentials {
    let database: any Database
    let credentials: any PushCredentialRepository

    func active(tenantID: String, provider: PushRegistration.Provider) async throws -> (PushCredential, Data)? {
        try await credentials.active(tenantID: tenantID, provider: provider, on: database)
    }
}
