import Crypto
import Foundation
import Testing

@Suite struct RandomUUIDTests {
    @Test func isVersion4WithTheRFCVariantAndNeverRepeats() {
        var seen = Set<UUID>()
        for _ in 0..<1000 {
            let id = UUID.random()
            let text = id.uuidString
            // xxxxxxxx-xxxx-4xxx-[89AB]xxx-xxxxxxxxxxxx
            #expect(Array(text)[14] == "4")
            #expect("89AB".contains(Array(text)[19]))
            #expect(UUID(uuidString: text) == id)
            seen.insert(id)
        }
        #expect(seen.count == 1000)
    }
}
