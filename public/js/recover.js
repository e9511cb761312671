// /recover: email → code → a new passkey or a new password → offer to end other sessions.
import {
  APIError, api, credentialJSON, errorText, message, parseCreationOptions, revealPasskeyControls, showStatus,
  takeSignal,
} from "./webauthn.js";

const steps = ["step-email", "step-code", "step-choose", "step-done"];
const startForm = document.getElementById("recover-start-form");
const verifyForm = document.getElementById("recover-verify-form");
const passwordForm = document.getElementById("recover-password-form");

function show(step) {
  for (const id of steps) document.getElementById(id).hidden = id !== step;
  document.querySelector(`#${step} input:not([hidden])`)?.focus();
}

function recoveryError(error) {
  if (error instanceof APIError) {
    const localized = {
      invalid_code: "invalidCode",
      code_expired: "codeExpired",
      recovery_required: "recoveryRequired",
    }[error.code];
    if (localized) return message(localized);
  }
  return errorText(error);
}

async function requestCode() {
  await api("POST", "/api/recovery/start", {
    email: startForm.email.value,
    ui_locales: document.documentElement.lang,
  });
  document.getElementById("recover-username").value = startForm.email.value;
}

startForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  showStatus("");
  try {
    await requestCode();
    show("step-code");
  } catch (error) {
    showStatus(recoveryError(error));
  }
});

document.getElementById("recover-resend").addEventListener("click", async () => {
  showStatus("");
  try {
    await requestCode();
  } catch (error) {
    showStatus(recoveryError(error));
  }
});

verifyForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  showStatus("");
  try {
    await api("POST", "/api/recovery/verify", { email: startForm.email.value, code: verifyForm.code.value });
    show("step-choose");
    revealPasskeyControls();
  } catch (error) {
    showStatus(recoveryError(error));
    if (error?.code === "code_expired") show("step-email");
  }
});

function recovered() {
  showStatus("");
  show("step-done");
}

document.getElementById("recover-passkey").addEventListener("click", async () => {
  showStatus("");
  try {
    const start = await api("POST", "/api/recovery/passkey/start", {});
    const credential = await navigator.credentials.create({
      signal: takeSignal(),
      publicKey: parseCreationOptions(start.options),
    });
    showStatus(message("working"), "info");
    await api("POST", "/api/recovery/passkey/finish", {
      challenge_id: start.challenge_id,
      credential: credentialJSON(credential),
    });
    recovered();
  } catch (error) {
    showStatus(recoveryError(error));
    if (error?.code === "recovery_required") show("step-email");
  }
});

passwordForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  showStatus("");
  try {
    await api("POST", "/api/recovery/password", { new_password: passwordForm.new_password.value });
    recovered();
  } catch (error) {
    showStatus(recoveryError(error));
    if (error?.code === "recovery_required") show("step-email");
  }
});

document.getElementById("end-other-sessions").addEventListener("click", async (event) => {
  const button = event.currentTarget;
  button.disabled = true;
  try {
    await api("POST", "/api/recovery/end-other-sessions", {});
    showStatus(message("otherSessionsEnded"), "info");
  } catch (error) {
    button.disabled = false;
    showStatus(recoveryError(error));
  }
});

// The mailed link carries the code in the fragment, which never reaches the server.
const fromLink = new URLSearchParams(window.location.hash.slice(1)).get("code");
if (fromLink && startForm.email.value) {
  verifyForm.code.value = fromLink;
  history.replaceState(null, "", window.location.pathname + window.location.search);
  show("step-code");
}
