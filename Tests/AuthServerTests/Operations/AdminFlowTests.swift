import Foundation
import Testing

@testable import AuthServer

/// How an operator names an account on the command line (the commands themselves are proven
/// against PostgreSQL in UsersOperationsTests and SessionsAndAuditTests).
@Suite struct AdminFlowTests {
    @Test func anAccountIsNamedByIdOrByNormalizedAddress() {
        let id = UUID()
        #expect(AdminFlow.AccountReference(id.uuidString) == .id(id))
        #expect(AdminFlow.AccountReference(id.lowercased) == .id(id))
        #expect(
            AdminFlow.AccountReference("Ada@Example.COM")
                == .email(normalized: EmailAddress.normalize("Ada@Example.COM")))
    }
}
