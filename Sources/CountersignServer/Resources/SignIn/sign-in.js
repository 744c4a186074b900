(function () {
  "use strict";
  var form = document.getElementById("continue-form");
  if (!form) { return; }
  var waitURL = form.getAttribute("data-wait");
  var body = new URLSearchParams(new FormData(form));
  function ask(delay) {
    setTimeout(function () {
      fetch(waitURL, { method: "POST", body: body, credentials: "same-origin", cache: "no-store" })
        .then(function (response) { return response.ok ? response.json() : { state: "error" }; })
        .then(function (answer) {
          if (answer.state === "pending") { ask(0); } else { form.submit(); }
        })
        .catch(function () { ask(2000); });
    }, delay);
  }
  ask(0);
})();