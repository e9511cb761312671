import {
  api, credentialJSON, errorText, message, parseCreationOptions, parseRequestOptions, passkeysSupported, showStatus,
  signalSignedIn, takeSignal,
} from "./webauthn.js";

function reloadWith(notice) {
  if (notice) sessionStorage.setItem("notice", notice);
  window.location.reload();
}

// Re-authentication: a credential change made too long after sign-in answers
// `reauthentication_required`. The page then shows the prompt (the account's passkey, or its
// password) and, once that succeeds, tries the same change again.
const prompt = document.getElementById("reauthenticate");
let settle = null;

function closePrompt(outcome) {
  if (!prompt) return;
  prompt.hidden = true;
  const done = settle;
  settle = null;
  done?.(outcome);
}

function askToReauthenticate() {
  if (!prompt) return Promise.resolve(false);
  closePrompt(false);
  prompt.hidden = false;
  showStatus("");
  (prompt.querySelector("#reauth-passkey") ?? prompt.querySelector("input[type=password]"))?.focus();
  return new Promise((resolve) => { settle = resolve; });
}

/// After a passkey re-authentication, as after a passkey sign-in: the account's current
/// passkeys and details for the passkey provider (WebAuthn Level 3 §5.1.10). Never in the way
/// of the change that asked for it.
async function signalCurrentAccount() {
  try {
    const [account, list] = await Promise.all([api("GET", "/api/account"), api("GET", "/api/passkeys")]);
    await signalSignedIn({
      all_accepted_credentials: {
        rpId: account.signal.rpId,
        userId: account.signal.userId,
        allAcceptedCredentialIds: list.passkeys.map((passkey) => passkey.credential_id),
      },
      current_user_details: account.signal,
    });
  } catch {
    // Best effort: the re-authentication itself succeeded.
  }
}

document.getElementById("reauth-cancel")?.addEventListener("click", () => closePrompt(false));

document.getElementById("reauth-passkey")?.addEventListener("click", async () => {
  showStatus("");
  try {
    const start = await api("POST", "/api/reauthenticate/passkey/start", {});
    const credential = await navigator.credentials.get({
      signal: takeSignal(),
      publicKey: parseRequestOptions(start.options),
    });
    await api("POST", "/api/reauthenticate/passkey/finish", {
      challenge_id: start.challenge_id,
      credential: credentialJSON(credential),
    });
    await signalCurrentAccount();
    closePrompt(true);
  } catch (error) {
    showStatus(errorText(error));
  }
});

document.getElementById("reauth-password-form")?.addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  showStatus("");
  try {
    await api("POST", "/api/reauthenticate/password", { password: form.password.value });
    form.password.value = "";
    closePrompt(true);
  } catch (error) {
    showStatus(error?.code === "wrong_password" ? message("wrongPassword") : errorText(error));
  }
});

/// Runs `action`; when the server asks for a recent sign-in, asks for it and runs `action` again.
async function withReauthentication(action) {
  try {
    return await action();
  } catch (error) {
    if (error?.code !== "reauthentication_required") throw error;
    if (!(await askToReauthenticate())) throw new DOMException("Re-authentication cancelled", "AbortError");
    return await action();
  }
}

const stored = sessionStorage.getItem("notice");
if (stored) {
  sessionStorage.removeItem("notice");
  showStatus(stored, "success");
}

async function addPasskey() {
  showStatus("");
  if (!passkeysSupported()) {
    showStatus(message("passkeyUnsupported"));
    return;
  }
  try {
    await withReauthentication(async () => {
      const start = await api("POST", "/api/passkeys/registration/start", {});
      const credential = await navigator.credentials.create({
        signal: takeSignal(),
        publicKey: parseCreationOptions(start.options),
      });
      await api("POST", "/api/passkeys/registration/finish", {
        challenge_id: start.challenge_id,
        credential: credentialJSON(credential),
      });
    });
    reloadWith(message("passkeyAdded"));
  } catch (error) {
    showStatus(errorText(error));
  }
}

document.getElementById("add-passkey")?.addEventListener("click", addPasskey);

for (const button of document.querySelectorAll("button.rename")) {
  button.addEventListener("click", () => {
    const item = button.closest("li");
    const form = item.querySelector(".rename-form");
    form.hidden = false;
    form.querySelector("input").focus();
  });
}

for (const form of document.querySelectorAll(".rename-form")) {
  form.querySelector(".rename-cancel").addEventListener("click", () => {
    form.hidden = true;
    form.closest("li").querySelector("button.rename").focus();
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await api("PATCH", `/api/passkeys/${form.dataset.id}`, { name: form.name.value });
      reloadWith(message("saved"));
    } catch (error) {
      showStatus(errorText(error));
    }
  });
}

for (const button of document.querySelectorAll("button.delete")) {
  button.addEventListener("click", async () => {
    if (!window.confirm(message("confirmDelete"))) return;
    try {
      const result = await withReauthentication(() => api("DELETE", `/api/passkeys/${button.dataset.id}`));
      if (typeof PublicKeyCredential?.signalAllAcceptedCredentials === "function") {
        await PublicKeyCredential.signalAllAcceptedCredentials(result.signal).catch(() => {});
      }
      reloadWith(message("saved"));
    } catch (error) {
      showStatus(errorText(error));
    }
  });
}

// The profile: the display name and the optional claims, saved together. An empty field
// removes its value. A refused value answers `invalid_<field>`; the field's own message (in the
// page's language) then shows under it.
const profileFields = ["given_name", "family_name", "preferred_username", "locale", "picture"];

function markProfileField(form, name) {
  for (const field of ["display_name", ...profileFields]) {
    const input = form.elements[field];
    const invalid = field === name;
    input?.toggleAttribute("aria-invalid", invalid);
    const error = document.getElementById(`${field}-error`);
    if (error) error.hidden = !invalid;
  }
}

document.getElementById("profile-form")?.addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const body = { display_name: form.display_name.value };
  for (const field of profileFields) body[field] = form.elements[field]?.value ?? "";
  markProfileField(form, null);
  try {
    const account = await api("PATCH", "/api/account", body);
    for (const field of profileFields) {
      if (form.elements[field]) form.elements[field].value = account[field] ?? "";
    }
    if (typeof PublicKeyCredential?.signalCurrentUserDetails === "function") {
      await PublicKeyCredential.signalCurrentUserDetails(account.signal).catch(() => {});
    }
    showStatus(message("saved"), "success");
  } catch (error) {
    const field = error?.code?.startsWith?.("invalid_") ? error.code.slice("invalid_".length) : null;
    if (field && profileFields.includes(field)) {
      markProfileField(form, field);
      form.elements[field]?.focus();
      showStatus(document.getElementById(`${field}-error`)?.textContent ?? errorText(error));
    } else {
      if (field === "display_name") markProfileField(form, field);
      showStatus(errorText(error));
    }
  }
});

document.getElementById("password-change-form")?.addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  try {
    await withReauthentication(() => api("POST", "/api/password", {
      current_password: form.current_password?.value,
      new_password: form.new_password.value,
    }));
    reloadWith(message("passwordChanged"));
  } catch (error) {
    showStatus(errorText(error));
  }
});

document.getElementById("remove-password")?.addEventListener("click", async () => {
  if (!window.confirm(message("confirmRemovePassword"))) return;
  try {
    await withReauthentication(() => api("DELETE", "/api/password"));
    reloadWith(message("saved"));
  } catch (error) {
    showStatus(errorText(error));
  }
});

for (const button of document.querySelectorAll("button.revoke")) {
  button.addEventListener("click", async () => {
    try {
      await api("DELETE", `/api/sessions/${button.dataset.id}`);
      button.closest("li").remove();
    } catch (error) {
      showStatus(errorText(error));
    }
  });
}

document.getElementById("end-other-sessions")?.addEventListener("click", async () => {
  try {
    await api("POST", "/api/recovery/end-other-sessions", {});
    reloadWith(message("otherSessionsEnded"));
  } catch (error) {
    showStatus(errorText(error));
  }
});

// Email verification: the code form (a GET to /verify-email) and the resend form work without
// JavaScript; with it they call the JSON API and answer on this page. The section carries its
// messages in the page's language as data attributes.
const verification = document.getElementById("email-verification");
if (verification) {
  const texts = verification.dataset;
  document.getElementById("email-verify-form")?.addEventListener("submit", async (event) => {
    event.preventDefault();
    showStatus(message("working"), "info");
    try {
      await api("POST", "/api/account/email/verify", { code: event.target.elements.code.value });
      reloadWith(texts.verified);
    } catch (error) {
      const localized = {
        invalid_code: texts.invalidCode,
        code_expired: texts.codeExpired,
        too_many_attempts: texts.locked,
      }[error?.code];
      showStatus(localized ?? errorText(error));
    }
  });
  document.getElementById("email-resend-form")?.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      await api("POST", "/api/account/email/resend", {});
      reloadWith(texts.sent);
    } catch (error) {
      showStatus(error?.code === "too_many_requests" ? texts.tooSoon : errorText(error));
    }
  });
}

// Deleting the account (`/account/delete`): the address typed again, a recent sign-in when the
// server asks for one, then the goodbye page.
document.getElementById("delete-account-form")?.addEventListener("submit", async (event) => {
  event.preventDefault();
  const form = event.currentTarget;
  const typed = form.email.value.trim();
  if (typed.toLowerCase() !== (form.dataset.email ?? "").toLowerCase()) {
    form.email.setAttribute("aria-invalid", "true");
    showStatus(form.dataset.mismatch);
    form.email.focus();
    return;
  }
  form.email.removeAttribute("aria-invalid");
  try {
    await withReauthentication(() => api("DELETE", "/api/account", { email: typed }));
    window.location.assign("/account/deleted");
  } catch (error) {
    showStatus(errorText(error));
  }
});

// Changing the address: a code to the new address, confirmed here (or by the mailed link).
const emailChange = document.getElementById("email-change-form");
emailChange?.addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    await withReauthentication(() => api("POST", "/api/account/email/change", { email: emailChange.email.value }));
    reloadWith(emailChange.dataset.sent);
  } catch (error) {
    showStatus(errorText(error));
  }
});

document.getElementById("email-change-confirm-form")?.addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    await api("POST", "/api/account/email/change/confirm", { code: event.currentTarget.code.value });
    reloadWith(emailChange?.dataset.changed);
  } catch (error) {
    showStatus(errorText(error));
  }
});

document.getElementById("email-change-cancel")?.addEventListener("click", async () => {
  try {
    await api("DELETE", "/api/account/email/change");
    reloadWith(message("saved"));
  } catch (error) {
    showStatus(errorText(error));
  }
});
