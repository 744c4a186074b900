(function () {
  "use strict";
  var form = document.getElementById("enroll-wait");
  var status = document.getElementById("status");
  if (!form || !status) { return; }
  var waitURL = form.getAttribute("action");
  var done = form.getAttribute("data-done");
  var body = new URLSearchParams(new FormData(form));
  function ask(delay) {
    setTimeout(function () {
      fetch(waitURL, { method: "POST", body: body, credentials: "same-origin", cache: "no-store" })
        .then(function (response) { return response.json(); })
        .then(function (answer) {
          if (answer.state === "pending") { ask(0); }
          else if (answer.state === "enrolled") { status.textContent = "Enrolled."; window.location.assign(done); }
          else if (answer.state === "expired") { status.textContent = "This code has expired. Go back to your account to start again."; }
          else if (answer.redirect) { window.location.assign(answer.redirect); }
          else { status.textContent = "The page cannot follow the enrollment. Go back to your account to see your phones."; }
        })
        .catch(function () { ask(2000); });
    }, delay);
  }
  ask(0);
})();