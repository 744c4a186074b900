/// The invitation page's script: asks the server (which holds each question up to 25 seconds)
/// until the phone has enrolled, then posts the page's sign-in form, which starts the
/// invitee's sign-in. An invitation that expires or is withdrawn while the page is open ends
/// the page as reloading it would: the server's heading and message, and no QR code, link or
/// button left to use. Without script the person presses "Done: sign in".
enum InvitationScript {
    static let name = "invitation.js"

    static let source = """
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
                  else if (answer.heading && answer.message) { end(answer.heading, answer.message); }
                  else { status.textContent = "The page cannot follow the enrollment. Reload it to see where the invitation stands."; }
                })
                .catch(function () { ask(2000); });
            }, delay);
          }
          ask(0);
        })();
        """
}
