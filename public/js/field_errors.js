// Ties an error in #status to the fields that caused it (WCAG 2.1 SC 3.3.1 Error Identification):
// `aria-invalid` and `aria-describedby` on each field while the error stands, removed on the next try.

const STATUS_ID = "status";

function describedBy(field) {
  return (field.getAttribute("aria-describedby") ?? "").split(/\s+/).filter((id) => id && id !== STATUS_ID);
}

export function markInvalid(fields) {
  for (const field of fields) {
    if (!field) continue;
    field.setAttribute("aria-invalid", "true");
    field.setAttribute("aria-describedby", [STATUS_ID, ...describedBy(field)].join(" "));
  }
}

export function clearInvalid(fields) {
  for (const field of fields) {
    if (!field) continue;
    field.removeAttribute("aria-invalid");
    const rest = describedBy(field);
    if (rest.length) field.setAttribute("aria-describedby", rest.join(" "));
    else field.removeAttribute("aria-describedby");
  }
}

/// Moves focus to the error message so that it is read first and the user starts from there.
export function focusStatus() {
  const status = document.getElementById(STATUS_ID);
  if (!status || !status.textContent.trim()) return;
  status.setAttribute("tabindex", "-1");
  status.focus();
}
