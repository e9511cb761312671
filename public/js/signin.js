import {
  APIError, api, credentialJSON, errorText, message, parseCreationOptions, parseRequestOptions, passkeysSupported,
  revealPasskeyControls, safeReturnTo, showStatus, signalSignedIn, signalUnknown, takeSignal,
} from "./webauthn.js";
import { clearInvalid, markInvalid } from "./field_errors.js";

const returnTo = () => safeReturnTo(document.body.dataset.returnTo);
/// How long a password sign-in waits for the conditional upgrade before continuing anyway.
const UPGRADE_GRACE_MS = 1500;

async function finishPasskeySignIn(challengeID, credential) {
  const result = await api("POST", "/api/passkeys/authentication/finish", {
    challenge_id: challengeID,
    credential: credentialJSON(credential),
    return_to: returnTo(),
  });
  await signalSignedIn(result.signals);
  window.location.assign(safeReturnTo(result.redirect_to));
}

async function passkeySignIn(mediation) {
  const signal = takeSignal();
  const start = await api("POST", "/api/passkeys/authentication/start", {});
  const credential = await navigator.credentials.get({
    mediation,
    signal,
    publicKey: parseRequestOptions(start.options),
  });
  if (!credential) return;
  showStatus(message("working"), "info");
  await finishPasskeySignIn(start.challenge_id, credential);
}

async function startConditional() {
  if (!passkeysSupported() || typeof PublicKeyCredential.isConditionalMediationAvailable !== "function") return;
  if (!(await PublicKeyCredential.isConditionalMediationAvailable())) return;
  try {
    await passkeySignIn("conditional");
  } catch (error) {
    // The user did not ask for this request: only a passkey they picked that the server
    // then refused is worth a message, not an aborted or dismissed autofill.
    if (!(error instanceof APIError)) return;
    showStatus(errorText(error));
    if (error.code === "unknown_credential") await signalUnknown(error);
  }
}

async function modal() {
  showStatus("");
  try {
    await passkeySignIn("required");
  } catch (error) {
    showStatus(errorText(error));
    if (error?.code === "unknown_credential") await signalUnknown(error);
    startConditional();
  }
}

/// The conditional upgrade: ask the password manager to create a passkey for the account
/// that has just signed in with a password. It may stay pending, be declined or fail; the
/// sign-in continues after a short grace period regardless.
async function conditionalUpgrade(upgrade) {
  if (!upgrade || !passkeysSupported()) return;
  const capabilities = (await PublicKeyCredential.getClientCapabilities?.().catch(() => ({}))) ?? {};
  if (capabilities.conditionalCreate === false) return;
  const attempt = (async () => {
    const credential = await navigator.credentials.create({
      mediation: "conditional",
      signal: takeSignal(),
      publicKey: parseCreationOptions(upgrade.options),
    });
    if (credential) {
      await api("POST", "/api/passkeys/registration/finish", {
        challenge_id: upgrade.challenge_id,
        credential: credentialJSON(credential),
      });
    }
  })().catch(() => {});
  await Promise.race([attempt, new Promise((resolve) => setTimeout(resolve, UPGRADE_GRACE_MS))]);
}

async function passwordSignIn(event) {
  if (!window.fetch) return; // plain form post
  event.preventDefault();
  const form = event.currentTarget;
  const button = form.querySelector('button[type="submit"]');
  button.disabled = true;
  showStatus("");
  clearInvalid([form.email, form.password]);
  try {
    const result = await api("POST", "/api/signin/password", {
      email: form.email.value,
      password: form.password.value,
      return_to: returnTo(),
    });
    await conditionalUpgrade(result.passkey_upgrade);
    window.location.assign(safeReturnTo(result.redirect_to));
  } catch (error) {
    button.disabled = false;
    // The passwordless policy's answer to a right password: use the passkey instead.
    showStatus(error?.code === "passkey_required" ? message("passkeyRequired") || error.message : errorText(error));
    if (error?.code === "invalid_credentials") markInvalid([form.email, form.password]);
    form.password.focus();
    form.password.select();
  }
}

document.getElementById("password-form")?.addEventListener("submit", passwordSignIn);
document.getElementById("passkey-button")?.addEventListener("click", modal);
revealPasskeyControls();
startConditional();
