"""Profile claims as a relying party sees them through authlib: the fields the account holder
fills on the account API reach userinfo, unset ones are absent (never null), and `updated_at`
follows the last profile change, not the account's creation."""

import time

from test_oidc import code_flow


def userinfo(client, discovery):
    response = client.get(discovery["userinfo_endpoint"])
    assert response.status_code == 200, response.text
    return response.json()


def test_profile_fields_reach_userinfo_and_updated_at_follows_the_changes(server, discovery, browser):
    client = code_flow(server, discovery, browser)[0]  # an authlib OAuth2Session holding the token
    before = userinfo(client, discovery)
    for claim in ("given_name", "family_name", "preferred_username", "locale", "picture"):
        assert claim not in before
    assert before["name"] == "Py Thon"

    time.sleep(1.1)  # updated_at has one-second resolution
    response = browser.session.patch(
        server["base"] + "/api/account",
        json={"given_name": "Py", "family_name": "Thon", "preferred_username": "pythonista", "locale": "en-gb",
              "picture": "https://example.com/py.png"},
        headers={"X-CSRF-Token": browser.csrf, "Origin": server["base"]}, timeout=10)
    assert response.status_code == 200, response.text

    after = userinfo(client, discovery)
    assert after["given_name"] == "Py"
    assert after["family_name"] == "Thon"
    assert after["preferred_username"] == "pythonista"
    assert after["locale"] == "en-GB"
    assert after["picture"] == "https://example.com/py.png"
    assert after["updated_at"] > before["updated_at"]
    assert after["updated_at"] >= int(time.time()) - 60

    # A bad value names its field and changes nothing.
    refused = browser.session.patch(
        server["base"] + "/api/account", json={"given_name": "Changed", "picture": "http://example.com/py.png"},
        headers={"X-CSRF-Token": browser.csrf, "Origin": server["base"]}, timeout=10)
    assert refused.status_code == 400
    assert refused.json()["error"] == "invalid_picture"
    assert userinfo(client, discovery) == after

    # Removed fields disappear from userinfo rather than turning null.
    removed = browser.session.patch(
        server["base"] + "/api/account", json={"picture": "", "locale": None},
        headers={"X-CSRF-Token": browser.csrf, "Origin": server["base"]}, timeout=10)
    assert removed.status_code == 200, removed.text
    final = userinfo(client, discovery)
    assert "picture" not in final and "locale" not in final
    assert None not in final.values()
