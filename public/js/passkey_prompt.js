// /passkey-prompt: create a passkey (modal ceremony) or continue without one.
import { api, credentialJSON, errorText, message, parseCreationOptions, passkeysSupported, safeReturnTo, showStatus,
  takeSignal } from "./webauthn.js";

const returnTo = () => safeReturnTo(document.body.dataset.returnTo);

document.getElementById("prompt-create").addEventListener("click", async (event) => {
  const button = event.currentTarget;
  showStatus("");
  if (!passkeysSupported()) {
    window.location.assign(returnTo());
    return;
  }
  button.disabled = true;
  try {
    const start = await api("POST", "/api/passkeys/registration/start", {});
    const credential = await navigator.credentials.create({
      signal: takeSignal(),
      publicKey: parseCreationOptions(start.options),
    });
    showStatus(message("working"), "info");
    await api("POST", "/api/passkeys/registration/finish", {
      challenge_id: start.challenge_id,
      credential: credentialJSON(credential),
    });
    window.location.assign(returnTo());
  } catch (error) {
    button.disabled = false;
    showStatus(errorText(error));
  }
});
