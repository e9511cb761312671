/// Every sentence the pages show, in English and Japanese. A missing translation is a
/// compile error, not a blank on the page.
public struct Strings: Sendable {
    public enum Key: String, Sendable, CaseIterable {
        case signInTitle
        case signInSubtitle
        case email
        case password
        case signIn
        case signInWithPasskey
        case stepUpPasskey
        case or
        case newHere
        case createAccount
        case signUpTitle
        case signUpSubtitle
        case displayName
        case passwordHint
        case createAccountButton
        case signUpWithPasskey
        case orUsePassword
        case haveAccount
        case accountTitle
        case signedInAs
        case profile
        case save
        case cancel
        case passkeys
        case passkeysIntro
        case addPasskey
        case noPasskeys
        case passkeyName
        case created
        case lastUsed
        case neverUsed
        case synced
        case deviceBound
        case rename
        case delete
        case confirmDelete
        case passwordSection
        case currentPassword
        case newPassword
        case changePassword
        case setPassword
        case noPassword
        case removePassword
        case removePasswordHint
        case confirmRemovePassword
        case sessions
        case thisDevice
        case signedIn
        case lastActive
        case revoke
        case signOut
        case errorTitle
        case backToSignIn
        case invalidCredentials
        case tooManyAttempts
        /// Password sign-in refused by the throttle: passkeys and recovery still work.
        case passwordLocked
        case csrfFailed
        case invalidEmail
        case invalidDisplayName
        case weakPassword
        case busy
        case passkeyFailed
        case passkeyCancelled
        case passkeyUnsupported
        case unknownPasskey
        case working
        case saved
        case passkeyAdded
        case passwordChanged
        case show
        case hide
        case language
        case notYou
        case scopeOfflineAccess
        case scopeEmail
        case scopeProfile
        case scopeOpenID
        case deny
        case allow
        case consentIntro
        case consentTitle
        case reauthTitle
        case reauthLead
        case reauthWithPasskey
        case reauthContinue
        case wrongPassword
        /// For an API error the page has no sentence of its own for: never the API's English.
        case requestFailed
    }

    public let language: PageLanguage

    public init(_ language: PageLanguage) { self.language = language }

    public subscript(_ key: Key) -> String {
        switch language {
        case .en: Strings.english(key)
        case .ja: Strings.japanese(key)
        }
    }

    static func english(_ key: Key) -> String {
        switch key {
        case .signInTitle: "Sign in"
        case .signInSubtitle: "Use your passkey or your email address and password."
        case .email: "Email address"
        case .password: "Password"
        case .signIn: "Sign in"
        case .signInWithPasskey: "Sign in with a passkey"
        case .stepUpPasskey: "This app asks you to confirm with a passkey."
        case .or: "or"
        case .newHere: "New here?"
        case .createAccount: "Create an account"
        case .signUpTitle: "Create your account"
        case .signUpSubtitle: "A passkey is the fastest and safest way to sign in."
        case .displayName: "Your name"
        case .passwordHint: "At least 8 characters."
        case .createAccountButton: "Create account"
        case .signUpWithPasskey: "Sign up with a passkey"
        case .orUsePassword: "or use a password"
        case .haveAccount: "Already have an account?"
        case .accountTitle: "Your account"
        case .signedInAs: "Signed in as"
        case .profile: "Profile"
        case .save: "Save"
        case .cancel: "Cancel"
        case .passkeys: "Passkeys"
        case .passkeysIntro:
            "Passkeys let you sign in with your fingerprint, face or screen lock instead of a password."
        case .addPasskey: "Add a passkey"
        case .noPasskeys: "You have no passkeys yet."
        case .passkeyName: "Passkey name"
        case .created: "Created"
        case .lastUsed: "Last used"
        case .neverUsed: "Never used"
        case .synced: "Synced"
        case .deviceBound: "This device only"
        case .rename: "Rename"
        case .delete: "Delete"
        case .confirmDelete: "Delete this passkey? You will no longer be able to sign in with it."
        case .passwordSection: "Password"
        case .currentPassword: "Current password"
        case .newPassword: "New password"
        case .changePassword: "Change password"
        case .setPassword: "Set a password"
        case .noPassword: "Your account has no password: you sign in with passkeys only."
        case .removePassword: "Remove password"
        case .removePasswordHint:
            "Once you have signed in with a passkey, you can remove your password and go passwordless."
        case .confirmRemovePassword: "Remove your password? You will sign in with passkeys only."
        case .sessions: "Where you're signed in"
        case .thisDevice: "This device"
        case .signedIn: "Signed in"
        case .lastActive: "Last active"
        case .revoke: "Sign out"
        case .signOut: "Sign out"
        case .errorTitle: "Something went wrong"
        case .backToSignIn: "Back to sign in"
        case .invalidCredentials: "The email address or password is incorrect."
        case .tooManyAttempts: "Too many failed attempts. Try again later."
        case .passwordLocked:
            "Too many failed attempts with this password. Try again in a few minutes, or sign in with a passkey or use “Can't sign in?”."
        case .csrfFailed: "Your session on this page expired. Please try again."
        case .invalidEmail: "Enter a valid email address."
        case .invalidDisplayName: "Enter your name (1 to 200 characters)."
        case .weakPassword: "Choose a longer password: at least 8 characters, not your email address."
        case .busy: "The server is busy. Please try again in a moment."
        case .passkeyFailed: "The passkey could not be used. Try again or use your password."
        case .passkeyCancelled: "Passkey request cancelled."
        case .passkeyUnsupported: "This browser does not support passkeys."
        case .unknownPasskey: "This passkey is not registered here any more."
        case .working: "One moment…"
        case .saved: "Saved."
        case .passkeyAdded: "Passkey added."
        case .passwordChanged: "Password changed."
        case .show: "Show"
        case .hide: "Hide"
        case .language: "Language"
        case .notYou: "Not you?"
        case .scopeOfflineAccess: "Stay signed in when you are not using it"
        case .scopeEmail: "See your email address"
        case .scopeProfile: "See your name"
        case .scopeOpenID: "Know who you are when you sign in"
        case .deny: "Cancel"
        case .allow: "Allow"
        case .consentIntro: "wants to:"
        case .consentTitle: "Allow access to your account?"
        case .reauthTitle: "Confirm it is you"
        case .reauthLead:
            "Changing how you sign in needs a recent sign-in. Use your passkey or enter your password to continue."
        case .reauthWithPasskey: "Use your passkey"
        case .reauthContinue: "Continue"
        case .wrongPassword: "The password is incorrect."
        case .requestFailed: "Something went wrong. Reload the page and try again."
        }
    }

    static func japanese(_ key: Key) -> String {
        switch key {
        case .signInTitle: "ログイン"
        case .signInSubtitle: "パスキー、またはメールアドレスとパスワードでログインします。"
        case .email: "メールアドレス"
        case .password: "パスワード"
        case .signIn: "ログイン"
        case .signInWithPasskey: "パスキーでログイン"
        case .stepUpPasskey: "このアプリはパスキーによる確認を求めています。"
        case .or: "または"
        case .newHere: "はじめての方"
        case .createAccount: "アカウントを作成"
        case .signUpTitle: "アカウントを作成"
        case .signUpSubtitle: "パスキーなら、すばやく安全にログインできます。"
        case .displayName: "お名前"
        case .passwordHint: "8文字以上で入力してください。"
        case .createAccountButton: "アカウントを作成"
        case .signUpWithPasskey: "パスキーで登録"
        case .orUsePassword: "またはパスワードを設定"
        case .haveAccount: "アカウントをお持ちの方"
        case .accountTitle: "アカウント"
        case .signedInAs: "ログイン中："
        case .profile: "プロフィール"
        case .save: "保存"
        case .cancel: "キャンセル"
        case .passkeys: "パスキー"
        case .passkeysIntro: "パスキーを使うと、パスワードの代わりに指紋・顔認証・画面ロックでログインできます。"
        case .addPasskey: "パスキーを追加"
        case .noPasskeys: "まだパスキーがありません。"
        case .passkeyName: "パスキーの名前"
        case .created: "作成"
        case .lastUsed: "最終使用"
        case .neverUsed: "未使用"
        case .synced: "同期"
        case .deviceBound: "この端末のみ"
        case .rename: "名前を変更"
        case .delete: "削除"
        case .confirmDelete: "このパスキーを削除しますか？削除するとこのパスキーではログインできなくなります。"
        case .passwordSection: "パスワード"
        case .currentPassword: "現在のパスワード"
        case .newPassword: "新しいパスワード"
        case .changePassword: "パスワードを変更"
        case .setPassword: "パスワードを設定"
        case .noPassword: "このアカウントにはパスワードがありません。パスキーだけでログインします。"
        case .removePassword: "パスワードを削除"
        case .removePasswordHint: "パスキーで一度ログインすると、パスワードを削除してパスワードレスにできます。"
        case .confirmRemovePassword: "パスワードを削除しますか？以後はパスキーだけでログインします。"
        case .sessions: "ログイン中の端末"
        case .thisDevice: "この端末"
        case .signedIn: "ログイン"
        case .lastActive: "最終アクセス"
        case .revoke: "ログアウト"
        case .signOut: "ログアウト"
        case .errorTitle: "問題が発生しました"
        case .backToSignIn: "ログインに戻る"
        case .invalidCredentials: "メールアドレスまたはパスワードが正しくありません。"
        case .tooManyAttempts: "失敗が続いたため、しばらくしてからお試しください。"
        case .passwordLocked:
            "このパスワードでの失敗が続いたため、数分後にもう一度お試しください。その間もパスキーでのログインと「サインインできませんか？」は使えます。"
        case .csrfFailed: "ページの有効期限が切れました。もう一度お試しください。"
        case .invalidEmail: "有効なメールアドレスを入力してください。"
        case .invalidDisplayName: "お名前を入力してください（1〜200文字）。"
        case .weakPassword: "8文字以上で、メールアドレスとは異なるパスワードにしてください。"
        case .busy: "混み合っています。しばらくしてからお試しください。"
        case .passkeyFailed: "パスキーを使用できませんでした。もう一度お試しいただくか、パスワードをご利用ください。"
        case .passkeyCancelled: "パスキーの操作がキャンセルされました。"
        case .passkeyUnsupported: "このブラウザはパスキーに対応していません。"
        case .unknownPasskey: "このパスキーは登録されていません。"
        case .working: "処理中…"
        case .saved: "保存しました。"
        case .passkeyAdded: "パスキーを追加しました。"
        case .passwordChanged: "パスワードを変更しました。"
        case .show: "表示"
        case .hide: "隠す"
        case .language: "言語"
        case .notYou: "別のアカウントを使う"
        case .scopeOfflineAccess: "使用していないときもログイン状態を保つ"
        case .scopeEmail: "あなたのメールアドレスを見る"
        case .scopeProfile: "あなたの名前を見る"
        case .scopeOpenID: "ログインしたあなたを識別する"
        case .deny: "キャンセル"
        case .allow: "許可"
        case .consentIntro: "が次のことを求めています："
        case .consentTitle: "アカウントへのアクセスを許可しますか？"
        case .reauthTitle: "ご本人の確認"
        case .reauthLead: "ログイン方法を変更するには、最近のログインが必要です。続けるには、パスキーを使うかパスワードを入力してください。"
        case .reauthWithPasskey: "パスキーを使う"
        case .reauthContinue: "続ける"
        case .wrongPassword: "パスワードが正しくありません。"
        case .requestFailed: "問題が発生しました。ページを再読み込みして、もう一度お試しください。"
        }
    }
}
