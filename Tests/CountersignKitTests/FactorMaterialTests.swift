import Foundation
import Testing
@testable import CountersignKit

/// Factor material in a `FileKeyStore`: owner-only files beside the keys, gone with them.
@Suite struct FactorMaterialTests {
    @Test(arguments: FactorMaterial.allCases)
    func materialIsAnOwnerOnlyFileThatReadsBack(_ kind: FactorMaterial) async throws {
        try await withTemporaryRoot { root in
            let store = FileKeyStore(root: root)
            let id = UUID().uuidString
            _ = try await store.createKeys(for: id)
            try await store.setFactorMaterial(Data("material".utf8), as: kind, for: id)

            #expect(try await store.factorMaterial(kind, for: id) == Data("material".utf8))
            #expect(try permissions(of: root.appendingPathComponent(id).appendingPathComponent(kind.rawValue)) == 0o600)
        }
    }

    @Test func nilRemovesTheMaterial() async throws {
        try await withTemporaryRoot { root in
            let store = FileKeyStore(root: root)
            let id = UUID().uuidString
            _ = try await store.createKeys(for: id)
            try await store.setFactorMaterial(Data("salt".utf8), as: .pinSalt, for: id)
            try await store.setFactorMaterial(nil, as: .pinSalt, for: id)
            #expect(try await store.factorMaterial(.pinSalt, for: id) == nil)
        }
    }

    @Test func deletingTheEnrollmentDeletesItsMaterial() async throws {
        try await withTemporaryRoot { root in
            let store = FileKeyStore(root: root)
            let id = UUID().uuidString
            _ = try await store.createKeys(for: id)
            try await store.setFactorMaterial(Data("seed".utf8), as: .totpSeed, for: id)
            try await store.delete(id)
            await #expect(throws: CountersignError.notEnrolled) { try await store.factorMaterial(.totpSeed, for: id) }
            #expect(contents(of: root).isEmpty)
        }
    }
}
