/// The sentence an error page shows for an OAuth error, in the page's language.
///
/// The protocol's `error_description` is English by definition (RFC 6749 §4.1.2.1 limits it
/// to ASCII), so a page in another language must not show it: WCAG 2.1 SC 3.1.2 asks that a
/// passage in another language be marked, and a person reading Japanese should not need
/// English to learn what went wrong. Each code has a sentence of its own; the situation (the
/// hint) is translated where the page knows it, and otherwise left to the English page and
/// the log. The raw code is shown beside the sentence, marked `lang="en"`.
public enum OAuthErrorText {
    /// - Parameters:
    ///   - code: the OAuth `error` code.
    ///   - description: the English `error_description` (the code's fixed sentence and the hint).
    ///   - hint: the English hint on its own, to find its translation.
    public static func message(code: String, description: String, hint: String, language: PageLanguage)
        -> String
    {
        switch language {
        case .en:
            return description
        case .ja:
            let sentence = japanese[code] ?? "リクエストを処理できませんでした。"
            guard let situation = japaneseHints[hint] else { return sentence }
            return sentence + situation
        }
    }

    /// The words before the raw code.
    public static func codeLabel(_ language: PageLanguage) -> String {
        switch language {
        case .en: "Error code:"
        case .ja: "エラーコード:"
        }
    }

    static let japanese: [String: String] = [
        "invalid_request": "リクエストに必要な項目が欠けているか、正しくない項目があります。",
        "invalid_client": "アプリケーションを確認できませんでした。",
        "invalid_grant": "認可が無効か、期限切れか、取り消されています。",
        "unauthorized_client": "このアプリケーションにはこの方法の利用が許可されていません。",
        "unsupported_grant_type": "この種類の認可には対応していません。",
        "unsupported_response_type": "この種類の応答には対応していません。",
        "invalid_scope": "求められたアクセス範囲が正しくないか、許可された範囲を超えています。",
        "access_denied": "リクエストは拒否されました。",
        "server_error": "サーバーで予期しない問題が起きました。",
        "temporarily_unavailable": "サーバーが一時的にリクエストを処理できません。しばらくしてからもう一度お試しください。",
        "login_required": "サインインが必要です。",
        "consent_required": "同意が必要です。",
        "interaction_required": "操作が必要です。",
        "account_selection_required": "アカウントを選んでください。",
        "request_not_supported": "'request' パラメーターには対応していません。",
        "request_uri_not_supported": "'request_uri' パラメーターには対応していません。",
        "invalid_token": "アクセストークンが無効か、期限切れか、取り消されています。",
        "insufficient_scope": "アクセストークンに必要な範囲が含まれていません。",
        "unsupported_token_type": "この種類のトークンは取り消せません。",
        "unmet_authentication_requirements": "求められた認証の条件を満たせません。",
        "invalid_target": "求められたリソースが正しくないか、このアプリケーションには許可されていません。",
        "invalid_request_uri": "リクエストの参照 (request_uri) が不明か、期限切れか、使用済みです。アプリケーションからもう一度始めてください。",
        "invalid_request_object": "リクエストオブジェクトが正しくありません。",
    ]

    /// The situations that end on an error page rather than at the client: an unknown client or
    /// redirect URI (RFC 6749 §4.1.2.1), an expired form of this server, a bad logout request.
    static let japaneseHints: [String: String] = [
        "The client is not registered.": "このアプリケーションは登録されていません。",
        "The 'redirect_uri' parameter is missing.": "戻り先 (redirect_uri) が指定されていません。",
        "The 'redirect_uri' is not registered for this client.":
            "戻り先 (redirect_uri) はこのアプリケーションに登録されていません。",
        "The request is malformed.": "リクエストの形式が正しくありません。",
        "The consent form expired; start again from the application.":
            "同意の画面の有効期限が切れました。アプリケーションからもう一度始めてください。",
        "No consent decision was sent.": "同意するかどうかが送られていません。",
        "The sign-out form expired; try again.": "サインアウトの画面の有効期限が切れました。もう一度お試しください。",
        "The user declined the request.": "リクエストは断られました。",
        "The 'client_id' does not match the audience of the 'id_token_hint'.":
            "client_id が id_token_hint の対象と一致しません。",
        "The 'post_logout_redirect_uri' requires an 'id_token_hint' or 'client_id'.":
            "post_logout_redirect_uri には id_token_hint か client_id が必要です。",
        "The 'post_logout_redirect_uri' is not registered for this client.":
            "サインアウト後の戻り先 (post_logout_redirect_uri) はこのアプリケーションに登録されていません。",
        "The 'id_token_hint' is not a valid ID token from this server.":
            "id_token_hint はこのサーバーが発行した有効な ID トークンではありません。",
        "The body must be application/x-www-form-urlencoded.": "送信された内容の形式が正しくありません。",
    ]
}
