// Shared helpers for the pages: JSON calls with the CSRF token, WebAuthn options parsing
// (native parse*FromJSON when available, base64url fallback otherwise), and status messages.

export const csrfToken = () => document.querySelector('meta[name="csrf-token"]')?.content ?? "";

export function message(name) {
  return document.getElementById("messages")?.dataset[name] ?? "";
}

export function showStatus(text, kind = "error") {
  const status = document.getElementById("status");
  if (!status) return;
  status.className = `status ${text ? kind : ""}`;
  status.textContent = text;
}

export class APIError extends Error {
  constructor(status, body) {
    super(body?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.error ?? "http_error";
    this.body = body;
  }
}

export async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrfToken(), Accept: "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const data = text ? JSON.parse(text) : null;
  if (!response.ok) throw new APIError(response.status, data);
  return data;
}

export const passkeysSupported = () =>
  typeof window.PublicKeyCredential === "function" && !!navigator.credentials;

function fromBase64URL(text) {
  const base64 = text.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(text.length / 4) * 4, "=");
  return Uint8Array.from(atob(base64), (c) => c.charCodeAt(0)).buffer;
}

function toBase64URL(buffer) {
  const bytes = new Uint8Array(buffer);
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function parseCreationOptions(json) {
  if (typeof PublicKeyCredential.parseCreationOptionsFromJSON === "function") {
    return PublicKeyCredential.parseCreationOptionsFromJSON(json);
  }
  return {
    ...json,
    challenge: fromBase64URL(json.challenge),
    user: { ...json.user, id: fromBase64URL(json.user.id) },
    excludeCredentials: (json.excludeCredentials ?? []).map((c) => ({ ...c, id: fromBase64URL(c.id) })),
  };
}

export function parseRequestOptions(json) {
  if (typeof PublicKeyCredential.parseRequestOptionsFromJSON === "function") {
    return PublicKeyCredential.parseRequestOptionsFromJSON(json);
  }
  return {
    ...json,
    challenge: fromBase64URL(json.challenge),
    allowCredentials: (json.allowCredentials ?? []).map((c) => ({ ...c, id: fromBase64URL(c.id) })),
  };
}

/// The credential in WebAuthn Level 3 JSON form (toJSON() where the browser has it).
export function credentialJSON(credential) {
  if (typeof credential.toJSON === "function") return credential.toJSON();
  const r = credential.response;
  const json = {
    id: credential.id,
    rawId: toBase64URL(credential.rawId),
    type: credential.type,
    authenticatorAttachment: credential.authenticatorAttachment ?? undefined,
    clientExtensionResults: credential.getClientExtensionResults?.() ?? {},
    response: { clientDataJSON: toBase64URL(r.clientDataJSON) },
  };
  if (r.attestationObject) {
    json.response.attestationObject = toBase64URL(r.attestationObject);
    json.response.transports = r.getTransports?.() ?? [];
  } else {
    json.response.authenticatorData = toBase64URL(r.authenticatorData);
    json.response.signature = toBase64URL(r.signature);
    if (r.userHandle) json.response.userHandle = toBase64URL(r.userHandle);
  }
  return json;
}

/// The one WebAuthn request in flight on this page. A new request aborts the previous one:
/// a conditional get or a pending conditional create would otherwise make it fail with
/// "A request is already pending".
let pending = null;

export function takeSignal() {
  if (pending) pending.abort(new DOMException("Superseded by another request", "AbortError"));
  pending = new AbortController();
  return pending.signal;
}

export function errorText(error) {
  if (error?.name === "NotAllowedError" || error?.name === "AbortError") return message("passkeyCancelled");
  if (error instanceof APIError) {
    // Messages in the page's language for the codes a person can act on.
    const localized = {
      csrf_failed: "csrfFailed",
      unknown_credential: "unknownPasskey",
      invalid_credentials: "invalidCredentials",
      too_many_attempts: "tooManyAttempts",
      invalid_email: "invalidEmail",
      invalid_display_name: "invalidDisplayName",
      weak_password: "weakPassword",
      temporarily_unavailable: "busy",
      passkey_verification_failed: "passkeyFailed",
    }[error.code];
    if (localized) return message(localized);
    // The API's own sentence is English: other languages get the page's general one.
    if (document.documentElement.lang !== "en") return message("requestFailed") || error.message;
    return error.message || message("passkeyFailed");
  }
  return message("passkeyFailed");
}

/// Tells the passkey provider the server no longer knows this credential (Signal API).
export async function signalUnknown(error) {
  const signal = error?.body?.signal;
  if (signal && typeof window.PublicKeyCredential?.signalUnknownCredential === "function") {
    try {
      await PublicKeyCredential.signalUnknownCredential(signal);
    } catch {
      // Best effort: a provider that cannot act on the signal changes nothing here.
    }
  }
}

/// After a passkey sign-in: tells the passkey provider which passkeys the account holds now
/// (so it can hide ones deleted elsewhere) and its current email and name (WebAuthn Level 3
/// §5.1.10). Each method is feature-detected; a call that throws or hangs never holds up the
/// sign-in (at most SIGNAL_GRACE_MS).
const SIGNAL_GRACE_MS = 1000;

export async function signalSignedIn(signals) {
  if (!signals || typeof window.PublicKeyCredential !== "function") return;
  const calls = [];
  const call = (name, argument) => {
    if (!argument || typeof PublicKeyCredential[name] !== "function") return;
    try {
      calls.push(Promise.resolve(PublicKeyCredential[name](argument)).catch(() => {}));
    } catch {
      // Best effort, as above.
    }
  };
  call("signalAllAcceptedCredentials", signals.all_accepted_credentials);
  call("signalCurrentUserDetails", signals.current_user_details);
  await Promise.race([Promise.all(calls), new Promise((resolve) => setTimeout(resolve, SIGNAL_GRACE_MS))]);
}

export function revealPasskeyControls() {
  if (!passkeysSupported()) return;
  for (const element of document.querySelectorAll("[data-requires-passkeys]")) element.hidden = false;
}

/// Same-origin relative path only, matching the server's rule.
export function safeReturnTo(path) {
  return typeof path === "string" && path.startsWith("/") && !path.startsWith("//") && !path.includes("\\")
    ? path
    : "/account";
}
