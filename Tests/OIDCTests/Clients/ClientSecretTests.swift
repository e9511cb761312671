import Crypto
import Testing
@testable import OIDC

@Suite struct ClientSecretTests {
    // HMAC-SHA256(key: bytes 0..15, message: "s3cr3t"), computed independently with Python's hmac module.
    @Test func knownHash() {
        #expect(
            ClientSecret.hash("s3cr3t", salt: Array(0..<16))
                == "$hmac-sha256$AAECAwQFBgcICQoLDA0ODw$ObV2ckyoBJFnYNAAENDZoP0FE9hD8MMU_goHlwAIlK4")
    }

    @Test func verify() {
        let hash = ClientSecret.hash("correct horse")
        #expect(ClientSecret.verify("correct horse", against: hash))
        #expect(!ClientSecret.verify("correct hors", against: hash))
        #expect(!ClientSecret.verify("correct horse ", against: hash))
        #expect(!ClientSecret.verify("", against: hash))
        #expect(ClientSecret.hash("correct horse") != hash)  // fresh salt each time
    }

    @Test(arguments: [
        "", "s3cr3t", "$hmac-sha256$", "$hmac-sha256$AAECAwQFBgcICQoLDA0ODw",
        "$hmac-sha256$AAECAwQFBgcICQoLDA0ODw$ObV2ckyoBJFnYNAAENDZoP0FE9hD8MMU_goHlwAIlK",  // short mac
        "$hmac-sha256$AAECAw$ObV2ckyoBJFnYNAAENDZoP0FE9hD8MMU_goHlwAIlK4",  // short salt
        "$hmac-sha256$AAECAwQFBgcICQoLDA0ODw$ObV2ckyoBJFnYNAAENDZoP0FE9hD8MMU_goHlwAIlK4$x",
        "$hmac-sha512$AAECAwQFBgcICQoLDA0ODw$ObV2ckyoBJFnYNAAENDZoP0FE9hD8MMU_goHlwAIlK4",
        "$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA",
    ])
    func malformedHashesNeverMatch(hash: String) {
        #expect(!ClientSecret.verify("s3cr3t", against: hash))
    }

    @Test func generatedSecretsAndTokens() {
        let secret = ClientSecret.generate()
        #expect(secret.count == 43 && secret != ClientSecret.generate())
        #expect(TokenGenerator.live.next().count == 43)
        let fixed = TokenGenerator { Array(repeating: 0xff, count: $0) }
        #expect(fixed.next() == String(repeating: "_", count: 42) + "8")
        // SHA-256("abc"), FIPS 180-2 example.
        #expect(
            TokenDigest.sha256("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
