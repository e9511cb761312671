import {
  api, credentialJSON, errorText, message, parseCreationOptions, revealPasskeyControls, safeReturnTo, showStatus,
  takeSignal,
} from "./webauthn.js";
import { clearInvalid, focusStatus, markInvalid } from "./field_errors.js";

const form = document.getElementById("signup-form");

async function passkeySignUp() {
  showStatus("");
  const email = form.email;
  const name = form.display_name;
  clearInvalid([email, name]);
  for (const field of [email, name]) {
    if (!field.checkValidity()) {
      field.reportValidity();
      return;
    }
  }
  const button = document.getElementById("passkey-signup");
  button.disabled = true;
  try {
    const start = await api("POST", "/api/passkeys/signup/start", { email: email.value, display_name: name.value });
    const credential = await navigator.credentials.create({
      signal: takeSignal(),
      publicKey: parseCreationOptions(start.options),
    });
    showStatus(message("working"), "info");
    const result = await api("POST", "/api/passkeys/signup/finish", {
      registration_id: start.registration_id,
      email: email.value,
      display_name: name.value,
      credential: credentialJSON(credential),
      return_to: safeReturnTo(document.body.dataset.returnTo),
    });
    window.location.assign(safeReturnTo(result.redirect_to));
  } catch (error) {
    button.disabled = false;
    showStatus(errorText(error));
    if (error?.code === "invalid_email") markInvalid([email]);
    if (error?.code === "invalid_display_name") markInvalid([name]);
    focusStatus();
  }
}

document.getElementById("passkey-signup")?.addEventListener("click", passkeySignUp);
revealPasskeyControls();
// A refused password sign-up comes back as this page with the reason in #status.
if (document.activeElement === document.body) focusStatus();
