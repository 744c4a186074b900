(function () {
  "use strict";
  var wait = document.getElementById("invitation-wait");
  var signIn = document.getElementById("invitation-sign-in");
  var status = document.getElementById("status");
  if (!wait || !signIn || !status) { return; }
  var body = new URLSearchParams(new FormData(wait));
  function end(heading, message) {
    ["enrollment", "invitation-sign-in", "other-session", "expiry"].forEach(function (id) {
      var element = document.getElementById(id);
      if (element) { element.remove(); }
    });
    document.getElementById("invitation-heading").textContent = heading;
    status.textContent = message;
  }
  function ask(delay) {
    setTimeout(function () {
      fetch(wait.getAttribute("action"), { method: "POST", body: body, credentials: "same-origin", cache: "no-store" })
        .then(function (response) { return response.json(); })
        .then(function (answer) {
          if (answer.state === "pending") { ask(0); }
          else if (answer.state === "enrolled") { status.textContent = "Your phone is set up. Now sign in with it."; signIn.submit(); }
          else if (answer.error === "invalid_ticket" && answer.error_description) {
            end(wait.getAttribute("data-refused"), answer.error_description);
          }
          else { status.textContent = "The page cannot follow the enrollment. Reload it to see where the invitation stands."; }
        })
        .catch(function () { ask(2000); });
    }, delay);
  }
  ask(0);
})();