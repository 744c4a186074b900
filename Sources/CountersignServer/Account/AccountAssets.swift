/// The account pages' additions to the stylesheet, and the enrollment page's script. Small
/// enough to write by hand, like the sign-in's (`PageAssets`).
enum AccountAssets {
    /// Appended to `countersign.css`. The account page is wider than the sign-in's card on a
    /// large screen and fills a phone's width on a small one.
    static let stylesheet = """

        main.card:has(.account) { max-width: 40rem; }
        .account h2 { margin: 2rem 0 .75rem; font-size: 1.125rem; }
        .device { margin-bottom: 1rem; padding: 1rem; border: 1px solid #d0d5dd; border-radius: 8px; }
        .device h3 { margin: 0 0 .5rem; font-size: 1.0625rem; overflow-wrap: anywhere; }
        .device dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem .75rem; margin: 0 0 1rem; font-size: .875rem; }
        .device dt { color: var(--muted); }
        .device dd { margin: 0; overflow-wrap: anywhere; }
        .device .warning { color: var(--error); }
        .rename .row { display: flex; gap: .5rem; }
        .rename .row input { flex: 1; min-width: 0; }
        .rename .row button { width: auto; margin-top: 0; white-space: nowrap; }
        .danger { color: var(--error); background: transparent; border: 1px solid var(--error); }
        button.link { width: auto; margin: .25rem 0 0; padding: 0; color: var(--accent); background: none; border: 0;
          text-decoration: underline; }
        .activity { margin: 0; padding: 0; list-style: none; }
        .activity li { padding: .75rem 0; border-top: 1px solid #eaecf0; }
        .activity p { margin: 0; }
        .activity time, .meta { font-size: .875rem; color: var(--muted); }
        .activity .message { overflow-wrap: anywhere; } .activity .denial { font-size: .875rem; }
        .reported { color: var(--error); }
        .notice { padding: .75rem 1rem; border-radius: 8px; color: var(--error); border: 1px solid var(--error); }
        .qr { display: block; width: 100%; max-width: 18rem; height: auto; margin: 0 auto 1rem; image-rendering: pixelated; }
        .uri code { display: block; padding: .5rem; font-size: .75rem; overflow-wrap: anywhere; background: #f2f4f7; border-radius: 6px; }
        .sign-out { margin-top: 2rem; text-align: center; }
        @media (max-width: 30rem) { .card { margin: .5rem; padding: 1.25rem; } }
        @media (prefers-color-scheme: dark) {
          .device { border-color: #333741; } .activity li { border-color: #333741; } .uri code { background: #0c111d; }
        }
        """

    /// Waits for the new phone: asks the server (which holds each question up to 25 seconds)
    /// until the ticket is no longer pending, then goes back to the account page, where the
    /// phone is listed. An expired ticket and a refused question are said on the page. Without
    /// script the user follows the "Done" link.
    static let enrollScript = """
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
                  else if (answer.state === "signed_out") { window.location.assign(done); }
                  else { status.textContent = "The page cannot follow the enrollment. Go back to your account to see your phones."; }
                })
                .catch(function () { ask(2000); });
            }, delay);
          }
          ask(0);
        })();
        """
}
