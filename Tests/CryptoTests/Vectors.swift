import Crypto
// Published test vectors, copied verbatim. The section of the source document is named beside each.

enum RFC7515 {
    // RFC 7515 Appendix A.2.1 / RFC 7517 Appendix A.2: the RSA key used for RS256.
    static let rsaN = "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ"
    static let rsaE = "AQAB"
    static let rsaD = "Eq5xpGnNCivDflJsRQBXHx1hdR1k6Ulwe2JZD50LpXyWPEAeP88vLNO97IjlA7_GQ5sLKMgvfTeXZx9SE-7YwVol2NXOoAJe46sui395IW_GO-pWJ1O0BkTGoVEn2bKVRUCgu-GjBVaYLU6f3l9kJfFNS3E0QbVdxzubSu3Mkqzjkn439X0M_V51gfpRLI9JYanrC4D4qAdGcopV_0ZHHzQlBjudU2QvXt4ehNYTCBr6XCLQUShb1juUO1ZdiYoFaFQT5Tw8bGUl_x_jTj3ccPDVZFD9pIuhLhBOneufuBiB4cS98l2SR_RQyGWSeWjnczT0QU91p1DhOVRuOopznQ"
    static let rsaP = "4BzEEOtIpmVdVEZNCqS7baC4crd0pqnRH_5IB3jw3bcxGn6QLvnEtfdUdiYrqBdss1l58BQ3KhooKeQTa9AB0Hw_Py5PJdTJNPY8cQn7ouZ2KKDcmnPGBY5t7yLc1QlQ5xHdwW1VhvKn-nXqhJTBgIPgtldC-KDV5z-y2XDwGUc"
    static let rsaQ = "uQPEfgmVtjL0Uyyx88GZFF1fOunH3-7cepKmtH4pxhtCoHqpWmT8YAmZxaewHgHAjLYsp1ZSe7zFYHj7C6ul7TjeLQeZD_YwD66t62wDmpe_HlB-TnBA-njbglfIsRLtXlnDzQkv5dTltRJ11BKBBypeeF6689rjcJIDEz9RWdc"
    static let rsaDP = "BwKfV3Akq5_MFZDFZCnW-wzl-CCo83WoZvnLQwCTeDv8uzluRSnm71I3QCLdhrqE2e9YkxvuxdBfpT_PI7Yz-FOKnu1R6HsJeDCjn12Sk3vmAktV2zb34MCdy7cpdTh_YVr7tss2u6vneTwrA86rZtu5Mbr1C1XsmvkxHQAdYo0"
    static let rsaDQ = "h_96-mK1R_7glhsum81dZxjTnYynPbZpHziZjeeHcXYsXaaMwkOlODsWa7I9xXDoRwbKgB719rrmI2oKr6N3Do9U0ajaHF-NKJnwgjMd2w9cjz3_-kyNlxAr2v4IKhGNpmM5iIgOS1VZnOZ68m6_pbLBSp3nssTdlqvd0tIiTHU"
    static let rsaQI = "IYd7DHOhrWvxkwPQsRM2tOgrjbcrfvtQJipd-DlcxyVuuM9sQLdgjVk2oy26F0EmpScGLq2MowX7fhd_QJQ3ydy5cY7YIBi87w93IKLEdfnbJtoOPLUW0ITrJReOgo1cq9SbsxYawBgfp_gh6A5603k2-ZQwVK0JKSHuLFkuQ3U"

    // RFC 7515 Appendix A.2.1: the JWS Signing Input and the RS256 signature.
    static let rs256SigningInput = "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
    static let rs256Signature = "cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw"

    // RFC 7515 Appendix A.3.1: the P-256 key and the ES256 signature (raw r || s).
    static let ecX = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU"
    static let ecY = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"
    static let ecD = "jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI"
    static let es256SigningInput = "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
    static let es256Signature = "DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"
}

enum RFC8037 {
    // RFC 8037 Appendix A.1 (private key) and A.2 (public key).
    static let d = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"
    static let x = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
    // RFC 8037 Appendix A.4: signing input and signature.
    static let signingInput = "eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc"
    static let signature = "hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg"
}

enum Fixtures {
    // A P-384 key, generated once with `openssl ecparam -name secp384r1 -genkey`, to prove
    // that a key on the wrong curve is refused where P-256 is required.
    static let p384PrivatePEM = """
        -----BEGIN PRIVATE KEY-----
        MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDASGF4G4Xzwlf6+7x1e
        b4iDPptGgeDdMeEGc7KR7VEmLICyXIJzgKdmx5duDru5jNChZANiAATbKc3EGuf9
        Hx6FxlqJW6ayKmak/D3sHh5lwYS+PWYv+vQA0a0xcW7gAcKLoL5C0R3cFQcod5+I
        PvV6745yKkiH9JwyhMvLXXFN5mQPMknAahzj4NkQpOdK/kcQJNo/o+E=
        -----END PRIVATE KEY-----
        """
    static let p384PublicPEM = """
        -----BEGIN PUBLIC KEY-----
        MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAE2ynNxBrn/R8ehcZaiVumsipmpPw97B4e
        ZcGEvj1mL/r0ANGtMXFu4AHCi6C+QtEd3BUHKHefiD71eu+OcipIh/ScMoTLy11x
        TeZkDzJJwGoc4+DZEKTnSv5HECTaP6Ph
        -----END PUBLIC KEY-----
        """
    // A P-256 key in SEC1 form and its public key, made with `openssl ecparam` / `openssl ec -pubout`.
    static let p256SEC1PEM = """
        -----BEGIN EC PRIVATE KEY-----
        MHcCAQEEIDSrJbmHnwTqxEZ8zhathvhTcBkmprHxmY2yOhMJjPlloAoGCCqGSM49
        AwEHoUQDQgAEyChzrYxKd82ncgfR5vGyTjG3CqnF/6h40st/DGCb20WNf4mywhz4
        83zW543ShPxHhWDis+O44hFSKJ9QslxSAg==
        -----END EC PRIVATE KEY-----
        """
    static let p256PublicPEM = """
        -----BEGIN PUBLIC KEY-----
        MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEyChzrYxKd82ncgfR5vGyTjG3CqnF
        /6h40st/DGCb20WNf4mywhz483zW543ShPxHhWDis+O44hFSKJ9QslxSAg==
        -----END PUBLIC KEY-----
        """
    // A 2048-bit RSA key in PKCS#1 form ("RSA PRIVATE KEY", `openssl rsa -traditional`) with its
    // public key as PKCS#1 ("RSA PUBLIC KEY", `-RSAPublicKey_out`) and as SPKI (`-pubout`).
    static let rsaPKCS1PrivatePEM = """
        -----BEGIN RSA PRIVATE KEY-----
        MIIEogIBAAKCAQEAmO1Db83lUe3kF6kQ5dat+zkUX8zWdyjrVF4GCUsVEFR6EQMr
        /rfyV2wIYM/lXo6QTKX9D72fq5KOt9R1D2TZ//Rd6r6CGDRipfMm4fNDMSBNqxSX
        3xezRXfmZa+sb6SevT8vpZmynzdJ2MMHAx8pGi1DW/BXX0dbRh4nOACbKU2kpIq2
        8+COENSPRZTQIAcSURRWJ2/1CtuUi7qCh27E9HguLLb6VY+DcRpJZAMMbAautU0b
        2s4zBbtfuRMXwnpXwQl7c1fnnm0/nNGapyopLzNn/1QBr7DrqjAL+wsM82jF296w
        VEjZvh/jnRGVlRqhOyKP5HFA/ymwi6GZb1BK4QIDAQABAoIBAADQAE2F9+1XtaBU
        9J/T/fg/7smUUNT9pN2kFj7sZQAONgvRfku/KT/cdUe8zKItx1R9uUd6uwnYhuUx
        JGIT9H71cTfmRTits1+tJNkkeruDFjnBEg5MYomm8zsGrbepVaXGjsRzEzQUJ7jj
        TsehRCc9QFNeICJQdb3jB4a22IKZD3+vRu+NgvAXzBb1sB95VQnjvRwYuUzfPgaI
        ddLAntaH8rSeFcvpyeMI6lx93CYR5vNudKFqYS5joOPudkJQIHS7cRsZtToIewlu
        nC+A93bawzt+b0WAPrdZ+wYbONuuraN2cR0J0sM0xCmw/hi/b8aquEmuP4eMajYw
        vhJ8u2UCgYEA125ZImw347wedKx8So45RJuRFHpiFcEEqudmIas6y6sDWANeciJ/
        6z/aOmjviQgAnYIlC/L2f9dbV/ngN4WgDBHApcakCYUGXxSCWcxeYXbEVfoVM8ta
        GRHWvQ1eypXFFrkVo59HQmxmVl56WeeWFXV7ObcYPauuTy+CZxTYHs8CgYEAtbmq
        ukw4HJRH+3TwnNSFOqatmueNXCFMU9MGoBQxoM2oRjuV/Dd7q5Wtm4ww5FfIJa/9
        hXykPNXZSAibk6W0PA4N/WscnXGx9szL7pMTHnWoNK5LVAqhp4OxHEg3iLjaJdeW
        fBsZjuqNwYyORbhyqbFKliPWSQbEV6a0sTqO508CgYAKgXsfTp+7H2Vs0yyMhjsM
        uXltwjoeTXdozjgQ1ETdwc078Y4diskqM8b0qkFkMVu2Uq5z0rlqqpntxGXGz2Fq
        tULr0rAVNsOEx39D2c+QeTZB6xw1lmkiZ9hNB+Xjg0JFRWlkvVPATYEAHUNiNwT+
        ruf/fIpWF5U8j1iQpleTyQKBgHqCvvx1YeayeIynW4b/JwpRT/x8WipgMGraez70
        HjkALI+coBK2/OLCN5YDvvpRy5bMvKd/TeHNcXxEgU3ailVqTDgqO9JQ0d9GVb1y
        3ZLNUyag0hvIRw79kysz7Gx54mdcnhDw3BwjOInhThDmtjZ8VYI+iroUm81Tj8Fj
        bu+1AoGAEVjXpKiB6EcIpfHUmln4Ci73CCK5bm4KPiXE/Mleq5JssdG2P3AkfpuD
        rgFdSAMBcbjJEvWrZ9EMO6a3rUFkmCtppdbIxd7vUDk2ikaZAOt/IgFt4CukpKt7
        doc+SNw1+xfnZv+wSUOE/y29HT9LfaROwAmRTOTy4Elx/DA56KM=
        -----END RSA PRIVATE KEY-----
        """
    static let rsaPKCS1PublicPEM = """
        -----BEGIN RSA PUBLIC KEY-----
        MIIBCgKCAQEAmO1Db83lUe3kF6kQ5dat+zkUX8zWdyjrVF4GCUsVEFR6EQMr/rfy
        V2wIYM/lXo6QTKX9D72fq5KOt9R1D2TZ//Rd6r6CGDRipfMm4fNDMSBNqxSX3xez
        RXfmZa+sb6SevT8vpZmynzdJ2MMHAx8pGi1DW/BXX0dbRh4nOACbKU2kpIq28+CO
        ENSPRZTQIAcSURRWJ2/1CtuUi7qCh27E9HguLLb6VY+DcRpJZAMMbAautU0b2s4z
        BbtfuRMXwnpXwQl7c1fnnm0/nNGapyopLzNn/1QBr7DrqjAL+wsM82jF296wVEjZ
        vh/jnRGVlRqhOyKP5HFA/ymwi6GZb1BK4QIDAQAB
        -----END RSA PUBLIC KEY-----
        """
    static let rsaSPKIPublicPEM = """
        -----BEGIN PUBLIC KEY-----
        MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAmO1Db83lUe3kF6kQ5dat
        +zkUX8zWdyjrVF4GCUsVEFR6EQMr/rfyV2wIYM/lXo6QTKX9D72fq5KOt9R1D2TZ
        //Rd6r6CGDRipfMm4fNDMSBNqxSX3xezRXfmZa+sb6SevT8vpZmynzdJ2MMHAx8p
        Gi1DW/BXX0dbRh4nOACbKU2kpIq28+COENSPRZTQIAcSURRWJ2/1CtuUi7qCh27E
        9HguLLb6VY+DcRpJZAMMbAautU0b2s4zBbtfuRMXwnpXwQl7c1fnnm0/nNGapyop
        LzNn/1QBr7DrqjAL+wsM82jF296wVEjZvh/jnRGVlRqhOyKP5HFA/ymwi6GZb1BK
        4QIDAQAB
        -----END PUBLIC KEY-----
        """
    // A 1024-bit RSA public key (openssl genpkey), which must be refused as too small.
    static let rsa1024PublicPEM = """
        -----BEGIN PUBLIC KEY-----
        MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQCqmyLufGFAcyLcuNNC2Qltw4kE
        3htI4nUv2ifjldKrZfywAAkhkAQJ22IPvf6Vg5QFmG6IJ5FXlk6ef1C0sA5/yxPO
        7jPzq1MTPgQp0tmvxo/NdAPTGkHdCvIHCVHWtJFvj7Rg8w8vQQVKmRfCvVreV4Hu
        Og2ZshqKyVJsas7TywIDAQAB
        -----END PUBLIC KEY-----
        """
}

func b64(_ text: String) -> [UInt8] {
    (try? Base64URL.decode(text)) ?? []
}
