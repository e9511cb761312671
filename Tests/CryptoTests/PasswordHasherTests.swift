import Foundation
import Testing
@testable import Crypto

@Suite struct PasswordHasherTests {
    // Small parameters keep the suite fast; the format and logic are the same.
    let hasher = PasswordHasher(parameters: .init(memoryKiB: 1024, iterations: 1, parallelism: 1))

    // RFC 9106 §5.3: Argon2id, m=32 KiB, t=3, p=4, with secret and associated data.
    @Test func rfc9106Section5_3Argon2id() throws {
        let tag = try Argon2.hash(
            password: [UInt8](repeating: 0x01, count: 32), salt: [UInt8](repeating: 0x02, count: 16),
            secret: [UInt8](repeating: 0x03, count: 8), associatedData: [UInt8](repeating: 0x04, count: 12),
            variant: .argon2id, iterations: 3, memoryKiB: 32, parallelism: 4, length: 32)
        #expect(Hex.encode(tag) == "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659")
    }

    // A block kept by `Argon2Memory` gives the same tag as libargon2's own allocation, when it
    // is large enough (32 KiB) and when it is too small (16 KiB: libargon2 allocates), each
    // time it is reused.
    @Test(arguments: [UInt32(32), 16])
    func rfc9106Section5_3InAKeptBlock(_ blockKiB: UInt32) throws {
        let memory = Argon2Memory(memoryKiB: blockKiB, capacity: 1)
        for _ in 0..<3 {
            let tag = try memory.withBlock { block throws(CryptoError) -> [UInt8] in
                try Argon2.hash(
                    password: [UInt8](repeating: 0x01, count: 32), salt: [UInt8](repeating: 0x02, count: 16),
                    secret: [UInt8](repeating: 0x03, count: 8),
                    associatedData: [UInt8](repeating: 0x04, count: 12),
                    variant: .argon2id, iterations: 3, memoryKiB: 32, parallelism: 4, length: 32,
                    memory: block)
            }
            #expect(Hex.encode(tag) == "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659")
        }
        #expect(memory.idleBlocks == 1)
    }

    // No more blocks are kept than computations may run at once.
    @Test func keptBlocksAreBoundedByCapacity() throws {
        let memory = Argon2Memory(memoryKiB: 8, capacity: 2)
        try memory.withBlock { _ throws(CryptoError) in
            try memory.withBlock { _ throws(CryptoError) in
                try memory.withBlock { _ throws(CryptoError) in #expect(memory.idleBlocks == 0) }
            }
        }
        #expect(memory.idleBlocks == 2)
    }

    // While computations follow each other a kept block stays resident; once none has run for
    // the release delay its pages go back to the system: what the last one left in it reads as
    // zeros in the next, so neither memory nor state lingers in an idle server.
    @Test func aKeptBlockIsReleasedOnceNoComputationRuns() throws {
        let memory = Argon2Memory(memoryKiB: 64, capacity: 1, releaseDelay: .milliseconds(100))
        try memory.withBlock { block throws(CryptoError) in
            _ = block.initializeMemory(as: UInt8.self, repeating: 0xA5)
        }
        #expect(memory.idleBlocks == 1)
        #expect(!memory.isReleased)
        try memory.withBlock { block throws(CryptoError) in
            #expect(block.allSatisfy { $0 == 0xA5 })
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while !memory.isReleased && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.02) }
        #expect(memory.isReleased)
        try memory.withBlock { block throws(CryptoError) in
            #expect(block.allSatisfy { $0 == 0 })
        }
    }

    // A computation that starts before the delay ends keeps the block: no release happens under
    // it (its pages would read as zeros halfway through a hash).
    @Test func aBlockInUseIsNeverReleased() throws {
        let memory = Argon2Memory(memoryKiB: 64, capacity: 1, releaseDelay: .milliseconds(20))
        try memory.withBlock { _ throws(CryptoError) in }
        try memory.withBlock { block throws(CryptoError) in
            _ = block.initializeMemory(as: UInt8.self, repeating: 0x5A)
            Thread.sleep(forTimeInterval: 0.2)
            #expect(block.allSatisfy { $0 == 0x5A })
        }
    }

    // The example in the README of the reference implementation (P-H-C/phc-winner-argon2):
    // `echo -n "password" | ./argon2 somesalt -t 2 -m 16 -p 4 -l 24`.
    @Test func referenceCLIExampleVerifies() throws {
        let phc = "$argon2i$v=19$m=65536,t=2,p=4$c29tZXNhbHQ$RdescudvJCsgt3ub+b+dWRWJTmaaJObG"
        #expect(try hasher.verify("password", against: phc) == .init(isValid: true, needsRehash: true))
        #expect(try hasher.verify("Password", against: phc).isValid == false)
    }

    @Test func hashFormatAndRoundTrip() throws {
        let phc = try hasher.hash("correct horse battery staple")
        #expect(phc.hasPrefix("$argon2id$v=19$m=1024,t=1,p=1$"))
        let parts = phc.split(separator: "$")
        #expect(parts.count == 5 && parts[3].count == 22 && parts[4].count == 43)
        #expect(
            try hasher.verify("correct horse battery staple", against: phc)
                == .init(isValid: true, needsRehash: false))
        #expect(
            try hasher.verify("correct horse battery stapl", against: phc)
                == .init(isValid: false, needsRehash: false))
        #expect(try hasher.hash("x") != hasher.hash("x"))
    }

    @Test func defaultParametersAreOWASPMinimum() throws {
        let phc = try PasswordHasher().hash("pässwörd 🔑")
        #expect(phc.hasPrefix("$argon2id$v=19$m=19456,t=2,p=1$"))
        #expect(try PasswordHasher().verify("pässwörd 🔑", against: phc).isValid)
    }

    @Test func verifyWithoutAccountRuns() throws {
        try hasher.verifyWithoutAccount("anything")
        let busy = PasswordHasher(
            parameters: .init(memoryKiB: 1024, iterations: 1, parallelism: 1), maxConcurrent: 1,
            maxWait: .milliseconds(5))
        #expect(busy.limiter.acquire(maxWait: .seconds(10)))
        #expect(throws: CryptoError.overloaded) { try busy.verifyWithoutAccount("anything") }
        busy.limiter.release()
    }

    @Test func weakerParametersNeedRehash() throws {
        let weak = try hasher.hash("pw")
        let stronger = PasswordHasher(parameters: .init(memoryKiB: 2048, iterations: 1, parallelism: 1))
        #expect(try stronger.verify("pw", against: weak) == .init(isValid: true, needsRehash: true))
    }

    // RFC 7914 §12, second vector: scrypt(P="password", S="NaCl", N=1024, r=8, p=16, dkLen=64).
    @Test func rfc7914Section12Scrypt() throws {
        let hash =
            Hex.decode(
                "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"
            ) ?? []
        let phc =
            "$scrypt$ln=10,r=8,p=16$" + Base64Codec.standard.encode(Array("NaCl".utf8)) + "$"
            + Base64Codec.standard.encode(hash)
        #expect(try hasher.verify("password", against: phc) == .init(isValid: true, needsRehash: true))
        #expect(try hasher.verify("passwore", against: phc).isValid == false)
    }

    // RFC 7914 §11: PBKDF2-HMAC-SHA256(P="passwd", S="salt", c=1, dkLen=64) and
    // (P="Password", S="NaCl", c=80000, dkLen=64).
    @Test func rfc7914Section11PBKDF2() throws {
        let one =
            Hex.decode(
                "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783"
            ) ?? []
        let phc1 =
            "$pbkdf2-sha256$i=1$" + Base64Codec.standard.encode(Array("salt".utf8)) + "$"
            + Base64Codec.standard.encode(one)
        #expect(try hasher.verify("passwd", against: phc1) == .init(isValid: true, needsRehash: true))
        #expect(try hasher.verify("passwe", against: phc1).isValid == false)
        let many =
            Hex.decode(
                "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d"
            ) ?? []
        // The same hash in passlib's notation: bare rounds and `.` instead of `+`.
        let passlib =
            "$pbkdf2-sha256$80000$" + Base64Codec.standard.encode(Array("NaCl".utf8)) + "$"
            + Base64Codec.standard.encode(many).replacingOccurrences(of: "+", with: ".")
        #expect(try hasher.verify("Password", against: passlib).isValid)
    }

    @Test(arguments: [
        "", "plain", "$argon2id$v=19$m=1024,t=1$c2FsdHNhbHQ$aGFzaGhhc2g",
        "$argon2id$v=19$m=1024,t=1,p=1$c2FsdHNhbHQ",
        "$argon2id$v=18$m=1024,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2g",
        "$argon2id$v=19$m=1024,t=1,p=1$c2FsdHNhbHQ$!!!",
        "$argon2id$v=19$m=99999999,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2g", "$bcrypt$whatever$c2FsdA$aGFzaA",
        "$scrypt$ln=10,r=8$c2FsdA$aGFzaGhhc2g", "$pbkdf2-sha256$i=x$c2FsdA$aGFzaGhhc2g",
        "$argon2id$v=19$m=1024,t=1,p=1,m=2$c2FsdHNhbHQ$aGFzaGhhc2g",
        "$scrypt$ln=20,r=32,p=1$c2FsdA$aGFzaGhhc2g", "$argon2id$v=19$m=1024,t=1,p=1$$aGFzaGhhc2g",
    ])
    func malformedStoredHashes(phc: String) {
        #expect(throws: CryptoError.invalidPasswordHash) { try hasher.verify("pw", against: phc) }
    }

    // With one permit and a tiny wait, a second computation while the first holds the
    // permit is refused rather than queued without bound.
    @Test func concurrencyBound() throws {
        let bounded = PasswordHasher(
            parameters: .init(memoryKiB: 1024, iterations: 1, parallelism: 1), maxConcurrent: 1,
            maxWait: .milliseconds(5))
        #expect(bounded.limiter.acquire(maxWait: .seconds(10)))
        #expect(throws: CryptoError.overloaded) { try bounded.hash("pw") }
        let copy = bounded
        #expect(throws: CryptoError.overloaded) {
            try copy.verify("pw", against: "$argon2id$v=19$m=1024,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2g")
        }
        bounded.limiter.release()
        #expect(try bounded.verify("pw", against: bounded.hash("pw")).isValid)
    }

    @Test func concurrentCallersAllSucceedWithinBound() async throws {
        let bounded = PasswordHasher(
            parameters: .init(memoryKiB: 1024, iterations: 1, parallelism: 1), maxConcurrent: 2,
            maxWait: .seconds(60))
        let results = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<4 {
                group.addTask {
                    (try? bounded.verify("p\(index)", against: bounded.hash("p\(index)")).isValid) ?? false
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results == [true, true, true, true])
    }
}

@Suite struct AESGCMTests {
    @Test func roundTripAndCombined() throws {
        let key = SymmetricKey(size: .bits256)
        let plaintext = Array("signing key bytes".utf8)
        let box = try AES.GCM.seal(plaintext, using: key, authenticating: Array("kid-1".utf8))
        #expect(box.nonce.count == 12 && box.tag.count == 16 && box.ciphertext.count == plaintext.count)
        let reopened = try AES.GCM.SealedBox(combined: box.combined)
        #expect(reopened == box)
        #expect(try AES.GCM.open(reopened, using: key, authenticating: Array("kid-1".utf8)) == plaintext)
        let empty = try AES.GCM.seal([UInt8](), using: key)
        #expect(try AES.GCM.open(empty, using: key).isEmpty)
    }

    // NIST GCM test vector (McGrew & Viega, "The Galois/Counter Mode of Operation", Test Case 14):
    // 256-bit zero key, zero IV, one zero block.
    @Test func knownAnswer() throws {
        let key = SymmetricKey(bytes: [UInt8](repeating: 0, count: 32))
        let box = try AES.GCM.seal(
            [UInt8](repeating: 0, count: 16), using: key, nonce: [UInt8](repeating: 0, count: 12))
        #expect(Hex.encode(box.ciphertext) == "cea7403d4d606b6e074ec5d3baf39d18")
        #expect(Hex.encode(box.tag) == "d0d1c8a799996bf0265b98b5d48ab919")
    }

    @Test func tamperingIsDetected() throws {
        let key = SymmetricKey(size: .bits256)
        let box = try AES.GCM.seal(Array("secret".utf8), using: key, authenticating: [1])
        var ciphertext = box.ciphertext
        ciphertext[0] ^= 1
        var tag = box.tag
        tag[15] ^= 1
        let cases: [(AES.GCM.SealedBox, SymmetricKey, [UInt8])] = [
            (try .init(nonce: box.nonce, ciphertext: ciphertext, tag: box.tag), key, [1]),
            (try .init(nonce: box.nonce, ciphertext: box.ciphertext, tag: tag), key, [1]),
            (box, SymmetricKey(size: .bits256), [1]),
            (box, key, [2]),
        ]
        for (candidate, candidateKey, aad) in cases {
            #expect(throws: CryptoError.authenticationFailure) {
                try AES.GCM.open(candidate, using: candidateKey, authenticating: aad)
            }
        }
    }

    @Test func invalidParameters() {
        #expect(throws: CryptoError.invalidParameter("key must be 256 bits")) {
            try AES.GCM.seal([1], using: SymmetricKey(size: .bits128))
        }
        #expect(throws: CryptoError.invalidParameter("nonce")) {
            try AES.GCM.seal([1], using: SymmetricKey(size: .bits256), nonce: [1, 2])
        }
        #expect(throws: CryptoError.invalidParameter("combined")) {
            try AES.GCM.SealedBox(combined: [UInt8](repeating: 0, count: 27))
        }
    }
}
