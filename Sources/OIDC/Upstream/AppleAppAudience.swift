/// Which app an identityToken was issued to, and whether this client may exchange it.
/// Apple sets `aud` to the app's bundle id; a client names its apps as `TEAMID.bundle.id`
/// (`apple_app_ids`, as in the apple-app-site-association file), so both the bundle id and
/// the team must match: an app of another team with the same bundle id is not ours.
public enum AppleAppAudience {
    /// The bundle id of `appID` (`TEAMID.bundle.id`) when its team is `teamID`.
    public static func bundleID(of appID: String, teamID: String) -> String? {
        guard let dot = appID.firstIndex(of: "."), appID[..<dot] == teamID else { return nil }
        let bundle = appID[appID.index(after: dot)...]
        return bundle.isEmpty ? nil : String(bundle)
    }

    /// The bundle id the token was issued to, when it is one of the client's apps of the
    /// provider's team and one of the provider's `bundleIDs`; nil otherwise. An `aud` with
    /// more than one value is refused: Apple issues each token to one app.
    public static func matching(
        audience: [String], clientAppIDs: [String], teamID: String, providerBundleIDs: [String]
    ) -> String? {
        guard audience.count == 1, let aud = audience.first else { return nil }
        let clientBundles = clientAppIDs.compactMap { bundleID(of: $0, teamID: teamID) }
        guard clientBundles.contains(aud), providerBundleIDs.contains(aud) else { return nil }
        return aud
    }
}
