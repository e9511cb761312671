"""The user agent of the harness: a cookie jar that follows the server's redirects, signs the
test user in through the real sign-in API when the server shows its sign-in page, submits the
consent form like a user ("allow"), submits form_post pages like a browser, and stops at the
relying party (a request to the harness's https receiver) or at any other page of the server
(what the suite calls a placeholder: an error page the tester would photograph)."""

import re
import threading
import urllib.parse
from html import unescape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import ssl

import requests


class Receiver:
    """The relying party's side on https://127.0.0.1:<port>: records every request (method,
    path, query, headers, form body) to the redirect, post-logout and back-channel logout URIs."""

    def __init__(self, cert_file=None, key_file=None):
        self.requests = []
        self.lock = threading.Lock()
        self.condition = threading.Condition(self.lock)
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def record(self):
                length = int(self.headers.get("Content-Length", "0") or "0")
                body = self.rfile.read(length).decode("utf-8", "replace") if length else ""
                url = urllib.parse.urlsplit(self.path)
                entry = {
                    "method": self.command, "path": url.path,
                    "query": dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True)),
                    "raw_query": url.query,
                    "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body,
                    "form": dict(urllib.parse.parse_qsl(body, keep_blank_values=True)),
                    "tls_version": self.connection.version() if isinstance(self.connection, ssl.SSLSocket) else None,
                }
                with receiver.condition:
                    receiver.requests.append(entry)
                    receiver.condition.notify_all()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Cache-Control", "no-store")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            do_GET = record
            do_POST = record

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.scheme = "http"
        if cert_file is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(str(cert_file), str(key_file))
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
            self.scheme = "https"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base(self):
        return f"{self.scheme}://127.0.0.1:{self.server.server_address[1]}/test/a/auth-server"

    def count(self):
        with self.lock:
            return len(self.requests)

    def since(self, index, path_suffix=None):
        with self.lock:
            return [r for r in self.requests[index:] if path_suffix is None or r["path"].endswith(path_suffix)]

    def wait_for(self, index, path_suffix, seconds):
        with self.condition:
            self.condition.wait_for(
                lambda: any(r["path"].endswith(path_suffix) for r in self.requests[index:]), timeout=seconds)
        return self.since(index, path_suffix)

    def close(self):
        self.server.shutdown()


class Callback:
    """The user agent arrived at the relying party."""

    def __init__(self, request):
        self.request = request


class Page:
    """The user agent stopped at a page of the server."""

    def __init__(self, response):
        self.response = response
        self.status = response.status_code
        self.text = response.text
        self.url = response.url


def hidden_fields(html):
    return {unescape(name): unescape(value)
            for name, value in re.findall(r'<input type="hidden" name="([^"]*)" value="([^"]*)"', html)}


def form_with_action(html, predicate):
    for match in re.finditer(r"<form\b([^>]*)>(.*?)</form>", html, re.S | re.I):
        attributes = dict((k.lower(), unescape(v)) for k, v in re.findall(r'([\w-]+)="([^"]*)"', match.group(1)))
        if predicate(attributes.get("action", "")):
            return attributes, hidden_fields(match.group(2))
    return None, None


class Browser:
    def __init__(self, base, ca_file, receiver, email, password):
        self.base = base
        self.receiver = receiver
        rp_base = receiver.base
        self.rp_base = rp_base
        self.email = email
        self.password = password
        self.session = requests.Session()
        self.session.verify = str(ca_file)
        self.session.trust_env = False  # the CA of this run only, never REQUESTS_CA_BUNDLE
        self.csrf = None
        self.sign_ins = 0
        self.consents = 0
        self.confirm_logout = True

    def post_json(self, path, payload):
        if self.csrf is None:
            self.csrf = self.session.get(self.base + "/api/csrf", timeout=10).json()["csrf_token"]
        return self.session.post(self.base + path, json=payload, timeout=10,
                                 headers={"X-CSRF-Token": self.csrf, "Origin": self.base})

    def sign_in(self, return_to=None):
        """What the user does on the sign-in page: email and password, through the same
        JSON API the page's script calls."""
        payload = {"email": self.email, "password": self.password}
        if return_to:
            payload["return_to"] = return_to
        response = self.post_json("/api/signin/password", payload)
        if response.status_code != 200:
            raise AssertionError(f"sign-in failed: {response.status_code} {response.text[:300]}")
        self.sign_ins += 1
        return urllib.parse.urljoin(self.base, response.json().get("redirect_to", "/account"))

    def navigate(self, url, method="GET", data=None):
        """Goes to `url` like a browser and returns a Callback or a Page."""
        for _ in range(20):
            if url.startswith(self.rp_base.split("/test/")[0]):
                index = self.receiver.count()
                self.session.request(method, url, data=data, allow_redirects=False, timeout=10)
                return Callback(self.receiver.since(index)[-1])
            response = self.session.request(method, url, data=data, allow_redirects=False, timeout=15,
                                            headers={"Origin": self.base} if method == "POST" else {})
            if response.status_code in (301, 302, 303, 307, 308) and "Location" in response.headers:
                url = urllib.parse.urljoin(url, response.headers["Location"])
                if response.status_code in (301, 302, 303):
                    method, data = "GET", None
                continue
            path = urllib.parse.urlsplit(response.url).path
            html = response.text if "html" in response.headers.get("Content-Type", "") else ""
            if response.status_code == 200 and path == "/signin":
                query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(response.url).query))
                url, method, data = self.sign_in(query.get("return_to")), "GET", None
                continue
            if response.status_code == 200 and path == "/passkey-prompt":
                # the invitation to create a passkey after some password sign-ins: "Not now"
                match = re.search(r'<a [^>]*href="([^"]*)"[^>]*id="prompt-skip"', html)
                if match is None:
                    return Page(response)
                url, method, data = urllib.parse.urljoin(response.url, unescape(match.group(1))), "GET", None
                continue
            if response.status_code == 200 and 'action="/authorize/consent"' in html:
                fields = hidden_fields(html)
                fields["decision"] = "allow"
                self.consents += 1
                url, method, data = self.base + "/authorize/consent", "POST", fields
                continue
            attributes, fields = form_with_action(html, lambda action: action.startswith(self.rp_base))
            if attributes is not None:
                # form_post: the page's script submits the form; so does this user agent.
                method = attributes.get("method", "get").upper()
                url, data = attributes["action"], fields
                continue
            if self.confirm_logout and response.status_code == 200 and 'action="/logout/confirm"' in html:
                attributes, fields = form_with_action(html, lambda action: action == "/logout/confirm")
                fields["confirm"] = "yes"  # the user presses "Sign out"
                url, method, data = self.base + "/logout/confirm", "POST", fields
                continue
            return Page(response)
        raise AssertionError("too many redirects")
