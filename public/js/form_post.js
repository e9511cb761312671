// Form Post Response Mode: submit the response to the client at once. Without script the
// page shows a Continue button that does the same.
const form = document.getElementById("form-post");
if (form) form.submit();
