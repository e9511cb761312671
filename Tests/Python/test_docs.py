"""Every command of ours shown in README.md and docs/*.md (`auth-server`, and the tools beside
it, `webauthn-tool` and `auth-bench`) runs, and does what the docs say: exit 0, or the exit code the line states with a trailing `# exits N` comment.

Commands are taken from the fenced shell blocks (```bash, ```sh, ```shell, ```console, and
blocks without a language). A command line may use the synopsis notation of the docs:
`[…]` is optional, `a|b` is one of two words, `( … | … )` is one of two groups, and CAPITAL
placeholders stand for values. Each line is expanded into variants (all optional parts left
out; all put in; every alternative at least once), the placeholders are replaced by real
values (a test config, an account created for the variant, one of its sessions, …), and each
variant runs against a throwaway PostgreSQL cluster, next to a running `auth-server serve`
that uses the same config (for `clients reload`).

A line in a shell block that mentions `auth-server` but cannot be run this way (a pipe, a
placeholder without a value) fails the test, and so does an inline code span in the prose
that names a command no fenced block shows: the docs cannot drift from the binary.
"""

import base64
import glob
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests

from conftest import ROOT, binary, free_port
from auth_server import wait_ready

DOCUMENTS = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
SHELL_LANGUAGES = {"", "bash", "sh", "shell", "console"}
PROGRAMS = ("auth-server", "webauthn-tool", "auth-bench")
MENTION = re.compile(r"(?:^|[\s|;&(`])(?:auth-server|webauthn-tool|auth-bench)(?=\s|$)")
PASSWORD = "docs-" + "7c1f0d9ab2e44f3c8e5a6b7d9012ef34"  # also a valid client secret (>= 32 characters)


# MARK: - Reading the docs


@dataclass
class DocCommand:
    source: str  # "docs/operations.md:123"
    text: str  # the line as written, without prompt and comment
    expected_exit: int = 0
    stdin_file: str | None = None
    problem: str | None = None  # why it cannot run, if it cannot
    variants: list = field(default_factory=list)


def fenced_blocks(text):
    """(language, first line number, lines) of every fenced code block."""
    blocks, language, start, lines = [], None, 0, []
    for number, line in enumerate(text.splitlines(), 1):
        fence = re.match(r"^\s*```\s*([\w+-]*)", line)
        if fence and language is None:
            language, start, lines = fence.group(1).lower(), number + 1, []
        elif fence and line.strip() == "```":
            blocks.append((language, start, lines))
            language = None
        elif language is not None:
            lines.append(line)
    return blocks


def tokenize(command):
    padded = re.sub(r"([\[\]()])", r" \1 ", command)
    return padded.split()


def parse_sequence(tokens, position, closing):
    """Parses a synopsis into ("seq", [items]) where an item is ("word", [alternatives]),
    ("optional", seq) or ("choice", [seq, …])."""
    branches, items = [], []
    while position < len(tokens):
        token = tokens[position]
        if token == closing:
            branches.append(("seq", items))
            return branches, position + 1
        if token == "|":
            if closing is None:
                raise ValueError("a pipe: write the command on its own line")
            branches.append(("seq", items))
            items = []
            position += 1
        elif token == "[":
            inner, position = parse_sequence(tokens, position + 1, "]")
            if len(inner) != 1:
                raise ValueError("use ( … | … ) for alternatives, not [ … | … ]")
            items.append(("optional", inner[0]))
        elif token == "(":
            inner, position = parse_sequence(tokens, position + 1, ")")
            items.append(("choice", inner))
        elif token in ("]", ")"):
            raise ValueError(f"unbalanced {token}")
        else:
            items.append(("word", token.split("|") if "|" in token and not token.startswith("$") else [token]))
            position += 1
    if closing is not None:
        raise ValueError(f"missing {closing}")
    branches.append(("seq", items))
    return branches, position


def expand(node, with_optional):
    """Every token list the synopsis node stands for, optional parts all in or all out."""
    kind, value = node
    if kind == "seq":
        results = [[]]
        for item in value:
            results = [prefix + rest for prefix in results for rest in expand(item, with_optional)]
        return results
    if kind == "word":
        return [[word] for word in value]
    if kind == "optional":
        return expand(value, with_optional) if with_optional else [[]]
    return [variant for branch in value for variant in expand(branch, with_optional)]


def variants_of(synopsis):
    branches, _ = parse_sequence(tokenize(synopsis), 0, None)
    found = []
    for with_optional in (False, True):
        for variant in expand(branches[0], with_optional):
            if variant not in found:
                found.append(variant)
    return found


def doc_commands():
    commands = []
    for path in DOCUMENTS:
        relative = path.relative_to(ROOT)
        for language, start, lines in fenced_blocks(path.read_text()):
            if language not in SHELL_LANGUAGES:
                continue
            pending, pending_start = "", 0
            for offset, line in enumerate(lines):
                if pending:
                    line = pending + " " + line.strip()
                elif line.rstrip().endswith("\\"):
                    pending_start = start + offset
                if line.rstrip().endswith("\\"):
                    pending = line.rstrip()[:-1].rstrip()
                    continue
                number = pending_start if pending else start + offset
                pending = ""
                command = parse_line(line, f"{relative}:{number}")
                if command:
                    commands.append(command)
    return commands


def parse_line(line, source):
    stripped = re.sub(r"^\s*\$\s+", "", line).strip()
    if not MENTION.search(stripped):
        return None
    comment = ""
    if " #" in stripped:
        stripped, comment = stripped.split(" #", 1)
        stripped = stripped.strip()
    command = DocCommand(source=source, text=stripped)
    exits = re.search(r"\bexits (\d+)", comment)
    if exits:
        command.expected_exit = int(exits.group(1))
    redirect = re.search(r"\s<\s*(\S+)$", stripped)
    if redirect:
        command.stdin_file = redirect.group(1)
        stripped = stripped[: redirect.start()].strip()
        command.text = stripped
    if stripped.split(" ", 1)[0] not in PROGRAMS:
        command.problem = "the line does not start with the command (run it on its own line)"
        return command
    try:
        command.variants = variants_of(stripped)
    except ValueError as error:
        command.problem = str(error)
    return command


def inline_commands():
    """(source, tokens) of inline code spans in the prose that start with `auth-server` or
    `webauthn-tool`."""
    spans = []
    for path in DOCUMENTS:
        text = path.read_text()
        prose = re.sub(r"^\s*```.*?^\s*```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S | re.M)
        for match in re.finditer(r"`([^`]+)`", prose):
            code = " ".join(match.group(1).split())
            # `auth-bench` modes named in the benchmark table are bench/run's load drivers.
            if code.split(" ", 1)[0] in ("auth-server", "webauthn-tool"):
                line = prose.count("\n", 0, match.start()) + 1
                spans.append((f"{path.relative_to(ROOT)}:{line}", code.split()))
    return spans


COMMANDS = doc_commands()


def runnable(commands):
    """(command, variant) pairs, each distinct variant once (README and docs repeat some)."""
    seen, pairs = set(), []
    for command in commands:
        for variant in [] if command.problem else command.variants:
            key = (tuple(variant), command.expected_exit)
            if key not in seen:
                seen.add(key)
                pairs.append((command, variant))
    return pairs


RUNNABLE = runnable(COMMANDS)


def test_the_docs_show_commands():
    sources = {command.source.split(":")[0] for command in COMMANDS}
    assert "README.md" in sources and "docs/operations.md" in sources and "docs/configuration.md" in sources
    assert len(RUNNABLE) >= 30


def test_every_command_line_in_the_docs_can_be_run():
    problems = [f"{command.source}: {command.text}: {command.problem}" for command in COMMANDS if command.problem]
    assert not problems, "\n".join(problems)


def test_inline_commands_name_a_command_a_block_shows():
    shown = [variant for _, variant in RUNNABLE]
    unknown = [
        f"{source}: `{' '.join(tokens)}`"
        for source, tokens in inline_commands()
        if not any(variant[: len(tokens)] == tokens for variant in shown)
    ]
    assert not unknown, "inline commands that no fenced block shows (and so no test runs):\n" + "\n".join(unknown)


def test_the_synopsis_notation_expands_as_documented():
    assert variants_of("auth-server users show --config FILE ID|EMAIL [--json]") == [
        ["auth-server", "users", "show", "--config", "FILE", "ID"],
        ["auth-server", "users", "show", "--config", "FILE", "EMAIL"],
        ["auth-server", "users", "show", "--config", "FILE", "ID", "--json"],
        ["auth-server", "users", "show", "--config", "FILE", "EMAIL", "--json"],
    ]
    assert variants_of("auth-server sessions revoke --config FILE (--account ID|EMAIL | --session UUID)") == [
        ["auth-server", "sessions", "revoke", "--config", "FILE", "--account", "ID"],
        ["auth-server", "sessions", "revoke", "--config", "FILE", "--account", "EMAIL"],
        ["auth-server", "sessions", "revoke", "--config", "FILE", "--session", "UUID"],
    ]
    assert parse_line("printf x | auth-server clients hash-secret", "x").problem
    assert parse_line("auth-server config check FILE   # exits 1", "x").expected_exit == 1
    assert parse_line("auth-server clients hash-secret < secret.txt", "x").stdin_file == "secret.txt"
    with pytest.raises(ValueError):
        variants_of("auth-server users list [--json")


# MARK: - A database, a config and a running server


def postgres_bin():
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    if candidates:
        return Path(candidates[-1]).parent
    found = shutil.which("pg_ctl")
    if not found:
        pytest.fail("PostgreSQL server binaries (initdb, pg_ctl) not found; install the postgresql package")
    return Path(found).parent


class Cluster:
    """A throwaway PostgreSQL cluster on 127.0.0.1; as root it runs as the postgres user."""

    def __init__(self, root):
        self.bin = postgres_bin()
        self.data = root / "pg"
        self.log = root / "pg.log"
        self.user = "postgres" if os.geteuid() == 0 else None
        self.data.mkdir(mode=0o700)
        self.log.touch()
        if self.user:
            shutil.chown(self.data, self.user)
            shutil.chown(self.log, self.user)
        self.run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8",
                 "--locale=C")
        for _ in range(5):
            self.port = free_port()
            options = f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories='' -c fsync=off"
            if self.run("pg_ctl", "-w", "-t", "60", "-D", str(self.data), "-l", str(self.log), "-o", options,
                        "start", check=False).returncode == 0:
                break
        else:
            pytest.fail("PostgreSQL did not start:\n" + self.log.read_text()[-2000:])
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def run(self, program, *args, check=True):
        command = [str(self.bin / program), *args]
        if self.user:
            command = ["runuser", "-u", self.user, "--", *command]
        return subprocess.run(command, capture_output=True, text=True, check=check, cwd="/")

    def stop(self):
        self.run("pg_ctl", "-w", "-t", "60", "-D", str(self.data), "-m", "fast", "stop", check=False)


@pytest.fixture(scope="module")
def workspace():
    root = Path(tempfile.mkdtemp(prefix="auth-server-docs-"))
    os.chmod(root, 0o755)
    cluster = Cluster(root)
    key = base64.urlsafe_b64encode(os.urandom(32)).decode().rstrip("=")
    environment = dict(os.environ, AUTH_SERVER_DATABASE_URL=cluster.url, AUTH_SERVER_KEY_ENCRYPTION_KEY=key)
    environment.pop("AUTH_SERVER_LISTEN", None)
    port = free_port()
    base = f"http://localhost:{port}"
    secret_hash = subprocess.run([binary(), "clients", "hash-secret"], input=PASSWORD + "\n", capture_output=True,
                                 text=True, check=True).stdout.split("client_secret_hash: ")[1].strip()

    def write_config(name, data_dir, listen):
        path = root / name
        path.write_text(json.dumps({
            "issuer": base,
            "listen": listen,
            "data_dir": str(root / data_dir),
            "public_dir": str(ROOT / "public"),
            "clients": [
                {"client_id": "docs-web", "client_name": "Docs web app", "redirect_uris": [f"{base}/callback"],
                 "client_secret_hash": secret_hash, "grant_types": ["authorization_code", "refresh_token"],
                 "scope": "openid profile email offline_access"},
                {"client_id": "docs-native", "application_type": "native",
                 "redirect_uris": ["http://127.0.0.1/callback", "com.example.docs:/callback"]},
            ],
        }))
        return path

    config = write_config("config.json", "var", f"127.0.0.1:{port}")
    # `serve` from the docs runs beside the fixture server: its own port and data_dir (pid file).
    serve_config = write_config("serve-config.json", "serve-var", f"127.0.0.1:{free_port()}")
    log = open(root / "server.log", "w")
    server = subprocess.Popen([binary(), "serve", "--config", str(config)], cwd=ROOT, env=environment, stdout=log,
                              stderr=log)
    try:
        wait_ready(f"{base}/readyz", server, root / "server.log")
        yield {"root": root, "config": config, "serve_config": serve_config, "base": base, "env": environment}
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


# MARK: - Placeholders


class Values:
    """The real values of one variant's placeholders; an account and a session are made only
    when the variant needs them."""

    def __init__(self, workspace):
        self.workspace = workspace
        self.account = None
        self.session = None

    def fresh_email(self):
        return f"docs-{uuid.uuid4().hex[:12]}@example.com"

    def ensure_account(self):
        if self.account is None:
            email = self.fresh_email()
            result = subprocess.run(
                [binary(), "users", "create", "--config", str(self.workspace["config"]), "--email", email, "--name",
                 "Docs Reader"], input=PASSWORD + "\n", capture_output=True, text=True, cwd=ROOT,
                env=self.workspace["env"], timeout=120)
            assert result.returncode == 0, result.stderr
            account_id = re.search(r"created account ([0-9a-f-]{36})", result.stdout).group(1)
            self.account = {"email": email, "id": account_id}
        return self.account

    def ensure_session(self):
        if self.session is None:
            account = self.ensure_account()
            base = self.workspace["base"]
            http = requests.Session()
            csrf = http.get(base + "/api/csrf", timeout=30).json()["csrf_token"]
            response = http.post(base + "/api/signin/password", json={"email": account["email"], "password": PASSWORD},
                                 headers={"X-CSRF-Token": csrf, "Origin": base}, timeout=60)
            assert response.status_code == 200, response.text
            self.session = response.json()["session_id"]
        return self.session

    def users_file(self):
        salt = os.urandom(16)
        digest = hashlib.pbkdf2_hmac("sha256", PASSWORD.encode(), salt, 1000)
        encode = lambda data: base64.b64encode(data).decode().rstrip("=")  # noqa: E731
        path = self.workspace["root"] / f"users-{uuid.uuid4().hex[:8]}.json"
        path.write_text(json.dumps([{"email": self.fresh_email(), "name": "Imported Reader",
                                     "password_hash": f"$pbkdf2-sha256$i=1000${encode(salt)}${encode(digest)}"}]))
        return str(path)

    def substitute(self, tokens, serve):
        words = []
        for index, token in enumerate(tokens):
            previous = tokens[index - 1] if index else ""
            words.append(self.value(token, previous, tokens, serve))
        return words

    def value(self, token, previous, tokens, serve):
        if token == "FILE":
            return str(self.workspace["serve_config" if serve else "config"])
        if token == "EMAIL":
            if previous == "--email" and tokens[1:3] == ["users", "create"]:
                return self.fresh_email()
            return self.ensure_account()["email"]
        if token == "ID":
            return self.ensure_account()["id"]
        if token == "UUID":
            return self.ensure_session()
        if token == "NAME":
            return {"--name": "Ada Lovelace", "--event": "account.created"}.get(previous, self.unknown(token))
        if token == "N":
            return {"--seconds": "1", "--limit": "5"}.get(previous, self.unknown(token))
        if token == "WHEN":
            return {"--since": "24h", "--until": "2099-01-01T00:00:00Z"}.get(previous, self.unknown(token))
        if token == "TEXT":
            return "docs-"
        if token in ("ROLE", "GROUP"):
            return "docs-reader"
        if token == "LOCALE":
            return "ja-JP"
        if token == "URL" and previous == "--picture":
            return "https://example.com/docs-reader.png"
        if token == "ALG":
            return "ES256"
        if token == "USERS.json":
            return self.users_file()
        if re.fullmatch(r"[A-Z][A-Z0-9_]*(\.[a-z]+)?", token) and token not in ("RS256", "PS256", "ES256"):
            return self.unknown(token)
        return token

    @staticmethod
    def unknown(token):
        return f"<no value for placeholder {token}>"


# MARK: - Running every command


def run_serve(words, workspace, expected):
    config = json.loads(Path(words[words.index("--config") + 1]).read_text())
    base = "http://" + config["listen"]
    log_path = workspace["root"] / "serve-from-docs.log"
    with open(log_path, "w") as log:
        process = subprocess.Popen([binary(), *words[1:]], cwd=ROOT, env=workspace["env"], stdout=log, stderr=log)
        try:
            wait_ready(f"{base}/readyz", process, log_path)
            process.send_signal(signal.SIGTERM)
            code = process.wait(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
    assert code == expected, log_path.read_text()[-3000:]


def program(name):
    """The built executable of `name`: `auth-server`, or a tool built beside it."""
    return binary() if name == "auth-server" else str(Path(binary()).parent / name)


def variant_id(variant):
    return " ".join(variant[1:] if variant[0] == "auth-server" else variant)


@pytest.mark.parametrize(
    "command,variant", RUNNABLE, ids=[f"{command.source} {variant_id(variant)}" for command, variant in RUNNABLE])
def test_doc_command(command, variant, workspace):
    serve = variant[1:2] == ["serve"]
    words = Values(workspace).substitute(variant, serve)
    missing = [word for word in words if word.startswith("<no value")]
    assert not missing, f"{command.source}: {command.text}: {missing}"
    if serve:
        run_serve(words, workspace, command.expected_exit)
        return
    stdin = PASSWORD + "\n"
    for attempt in range(3):
        result = subprocess.run([program(words[0]), *words[1:]], input=stdin, capture_output=True, text=True, cwd=ROOT,
                                env=workspace["env"], timeout=600)
        # One maintenance pass runs at a time across instances; the server may hold the lock.
        if not (result.returncode == 1 and "try again later" in result.stderr):
            break
        time.sleep(2)
    assert result.returncode == command.expected_exit, (
        f"{command.source}: `{' '.join(words)}` exited {result.returncode}, the docs say {command.expected_exit}\n"
        f"stdout:\n{result.stdout[-2000:]}\nstderr:\n{result.stderr[-2000:]}")


# MARK: - The threat model names real tests


def test_every_test_the_threat_model_names_exists():
    """docs/security.md points each claim at a test: `Suite.test`, a bare test name, or
    `file.py::test_name`. Each must be defined under Tests/, so the page cannot point at a test
    that was renamed or removed."""
    text = (ROOT / "docs" / "security.md").read_text()
    sources = "\n".join(
        Path(path).read_text(errors="replace")
        for pattern in ("Tests/**/*.swift", "Tests/**/*.py")
        for path in glob.glob(str(ROOT / pattern), recursive=True)
    )
    names = set()
    for span in re.findall(r"`([^`]+)`", text):
        if "::" in span:
            names.add(span.split("::")[-1])
        elif re.fullmatch(r"[A-Z][A-Za-z]*Tests(\.[a-z][A-Za-z]+)?", span):
            names.update(span.split("."))
        elif re.fullmatch(r"[a-z][A-Za-z]{24,}", span):
            names.add(span)
    assert len(names) >= 60
    missing = sorted(name for name in names if not re.search(rf"\b(func|def|struct) {name}\b", sources))
    assert not missing, f"docs/security.md names tests that do not exist: {missing}"
