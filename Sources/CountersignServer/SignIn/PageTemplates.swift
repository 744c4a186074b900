/// The HTML of the hosted pages, as Mustache templates (rendered by `Pages`). They are compiled
/// into the server rather than read from disk, so that the one binary is the whole server. Every
/// `{{value}}` is HTML-escaped by the engine; no template uses the unescaped forms. Each page
/// fills the `content` block of `layout`, which links the stylesheet and, where a page must wait,
/// its one script: the Content-Security-Policy allows no inline script or style.
enum PageTemplates {
    static let all: [String: String] = [
        "layout": layout, "sign-in": signIn, "waiting": waiting, "outcome": outcome, "error": error,
        "signed-out": signedOut, "sign-out": signOut, "invitation": invitation,
    ].merging(AccountTemplates.all) { mine, _ in mine }.merging(ConsoleTemplates.all) { mine, _ in mine }

    static let layout = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="referrer" content="no-referrer">
        <title>{{title}} · {{tenantName}}</title>
        <link rel="stylesheet" href="/assets/countersign.css">
        {{#script}}<script src="/assets/{{script}}" defer></script>{{/script}}
        </head>
        <body>
        <main class="card">
        <p class="tenant">{{tenantName}}</p>
        {{$content}}{{/content}}
        </main>
        </body>
        </html>

        """

    static let signIn = """
        {{<layout}}{{$content}}
        <h1>Sign in</h1>
        <p class="lead">to continue to <strong>{{clientName}}</strong></p>
        {{#phone}}<form method="post" action="{{base}}/authorize/sign-in" novalidate>
        <input type="hidden" name="attempt" value="{{attempt}}">
        <label for="username">Username</label>
        <input id="username" name="username" type="text" autocomplete="username{{#passkeys}} webauthn{{/passkeys}}" autocapitalize="none" spellcheck="false" value="{{username}}"{{#usernameError}} aria-invalid="true" aria-describedby="username-error"{{/usernameError}} autofocus required>
        {{#usernameError}}<p class="field-error" id="username-error">{{usernameError}}</p>{{/usernameError}}
        <button type="submit" id="continue">Continue</button>
        </form>{{/phone}}
        {{#passkeys}}<div id="passkey" data-options="{{base}}/authorize/passkey/options" data-finish="{{base}}/authorize/passkey" data-attempt="{{attempt}}" data-conditional="{{phone}}">
        <button type="button" id="passkey-sign-in"{{#phone}} class="secondary"{{/phone}}>Sign in with a passkey</button>
        <p class="field-error" id="passkey-error" role="alert"{{^passkeyError}} hidden{{/passkeyError}}>{{passkeyError}}</p>
        </div>{{/passkeys}}
        {{#phone}}<p class="hint">We will send a request to your phone. Approve it there to sign in.</p>{{/phone}}
        {{^phone}}{{#passkeys}}<p class="hint">This application asks for a passkey: your fingerprint, face, screen lock or security key.</p>{{/passkeys}}{{^passkeys}}<p class="field-error">This application asks for a passkey, and passkeys are not enabled here.</p>{{/passkeys}}{{/phone}}
        {{/content}}{{/layout}}
        """

    static let waiting = """
        {{<layout}}{{$content}}
        <h1>Approve on your phone</h1>
        <p class="lead">We sent a request for <strong>{{username}}</strong> to sign in to <strong>{{clientName}}</strong>.</p>
        {{#matchNumber}}<p>On your phone, choose this number:</p>
        <p class="match-number" id="match-number">{{matchNumber}}</p>{{/matchNumber}}
        <p class="status" id="status" role="status" aria-live="polite">Waiting for your answer…</p>
        <form id="continue-form" method="post" action="{{base}}/authorize/continue" data-wait="{{base}}/authorize/wait">
        <input type="hidden" name="attempt" value="{{attempt}}">
        <button type="submit" class="secondary">I have answered on my phone</button>
        </form>
        <p class="hint">The request expires at {{expiresAt}} (UTC). It shows where it came from: {{origin}}.</p>
        {{/content}}{{/layout}}
        """

    static let outcome = """
        {{<layout}}{{$content}}
        <h1 id="outcome" data-outcome="{{kind}}">{{heading}}</h1>
        <p class="lead">{{message}}</p>
        {{#retry}}<form method="post" action="{{base}}/authorize/sign-in">
        <input type="hidden" name="attempt" value="{{attempt}}">
        <input type="hidden" name="username" value="{{username}}">
        <button type="submit" id="retry">Send a new request</button>
        </form>{{/retry}}
        {{#anotherUsername}}<form method="post" action="{{base}}/authorize/sign-in">
        <input type="hidden" name="attempt" value="{{attempt}}">
        <input type="hidden" name="start_over" value="yes">
        <button type="submit" id="another-username">Try another username</button>
        </form>{{/anotherUsername}}
        {{#returnURL}}<p><a class="button secondary" id="return" href="{{returnURL}}">Return to {{clientName}}</a></p>{{/returnURL}}
        {{/content}}{{/layout}}
        """

    static let error = """
        {{<layout}}{{$content}}
        <h1 id="outcome" data-outcome="error">{{heading}}</h1>
        <p class="lead">{{message}}</p>
        <p class="hint">Error code: <code>{{code}}</code></p>
        {{/content}}{{/layout}}
        """

    static let invitation = """
        {{<layout}}{{$content}}
        <h1 id="invitation-heading">Set up your phone</h1>
        <p class="lead">You were invited to sign in as <strong id="invitee">{{username}}</strong> with your phone.</p>
        {{#signedInAs}}<p class="notice" id="other-session" role="status">This browser is signed in as {{signedInAs}}. Signing in here as {{username}} signs {{signedInAs}} out of it.</p>{{/signedInAs}}
        <div id="enrollment">
        <p>Scan this code with the app on your phone:</p>
        <img class="qr" id="enrollment-qr" src="{{qrImage}}" alt="QR code of the enrollment link">
        <p>On the phone itself, <a href="{{enrollmentURI}}" id="open-in-app">open the enrollment link</a>, or enter it in the app:</p>
        <p class="uri"><code id="enrollment-uri">{{enrollmentURI}}</code></p>
        </div>
        <p class="status" id="status" role="status" aria-live="polite">{{status}}</p>
        <form id="invitation-wait" method="post" action="{{base}}/invitation/wait" hidden>
        <input type="hidden" name="ticket" value="{{ticket}}">
        </form>
        <form id="invitation-sign-in" method="post" action="{{base}}/invitation/sign-in">
        <input type="hidden" name="ticket" value="{{ticket}}">
        <button type="submit" class="secondary" id="done">Done: sign in</button>
        </form>
        <p class="hint" id="expiry">The invitation works once, until {{expiresAt}}. Whoever scans the code can enroll a phone as you: show it to nobody else.</p>
        {{/content}}{{/layout}}
        """

    static let signedOut = """
        {{<layout}}{{$content}}
        <h1 id="outcome" data-outcome="signed-out">You are signed out</h1>
        <p class="lead">{{message}}</p>
        <p><a href="{{base}}/account" id="sign-in-again">Sign in again</a></p>
        {{/content}}{{/layout}}
        """

    static let signOut = """
        {{<layout}}{{$content}}
        <h1 id="sign-out-question">Sign out?</h1>
        <p class="lead">You are signed in to {{tenantName}}{{#username}} as <strong id="username">{{username}}</strong>{{/username}}.
        Signing out ends your session in this browser.</p>
        <form method="post" action="{{base}}/logout">
        <input type="hidden" name="csrf" value="{{csrf}}">
        {{#fields}}<input type="hidden" name="{{name}}" value="{{value}}">
        {{/fields}}<button type="submit" id="sign-out">Sign out</button>
        </form>
        <p><a href="{{base}}/account" id="stay">Stay signed in</a></p>
        {{/content}}{{/layout}}
        """
}

/// The files the pages link: one stylesheet and one script, served at `/assets/…` with a
/// day's caching. Small enough to write by hand; no build step makes them.
enum PageAssets {
    static let files: [String: (type: String, body: String)] = [
        "countersign.css": ("text/css; charset=utf-8", stylesheet + AccountTemplates.stylesheet),
        "sign-in.js": ("text/javascript; charset=utf-8", signInScript),
        "passkey.js": ("text/javascript; charset=utf-8", PasskeyScript.source),
        InvitationScript.name: ("text/javascript; charset=utf-8", InvitationScript.source),
        "console.css": ("text/css; charset=utf-8", ConsoleTemplates.stylesheet),
    ].merging(AccountTemplates.scripts) { mine, _ in mine }

    static let stylesheet = """
        :root { color-scheme: light dark; --accent: #1f5eff; --error: #c62828; --muted: #667085; }
        * { box-sizing: border-box; }
        body { margin: 0; min-height: 100vh; display: flex; align-items: center; justify-content: center;
          font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: #f2f4f7; color: #101828; }
        @media (prefers-color-scheme: dark) { body { background: #0c111d; color: #f5f5f6; } .card { background: #161b26; } }
        .card { width: 100%; max-width: 26rem; margin: 1rem; padding: 2rem; background: #fff; border-radius: 12px;
          box-shadow: 0 1px 3px rgba(16, 24, 40, .1), 0 1px 2px rgba(16, 24, 40, .06); }
        .tenant { margin: 0 0 1rem; font-size: .875rem; color: var(--muted); text-transform: uppercase; letter-spacing: .05em; }
        h1 { margin: 0 0 .5rem; font-size: 1.5rem; }
        .lead { margin: 0 0 1.5rem; }
        label { display: block; margin-bottom: .25rem; font-weight: 600; }
        input[type=text] { width: 100%; padding: .625rem .75rem; font: inherit; border: 1px solid #d0d5dd; border-radius: 8px; }
        input[aria-invalid=true] { border-color: var(--error); }
        .field-error { margin: .25rem 0 0; color: var(--error); font-size: .875rem; }
        button, .button { display: inline-block; width: 100%; margin-top: 1rem; padding: .625rem 1rem; font: inherit; font-weight: 600;
          text-align: center; text-decoration: none; color: #fff; background: var(--accent); border: 0; border-radius: 8px; cursor: pointer; }
        .secondary { color: var(--accent); background: transparent; border: 1px solid var(--accent); }
        .hint { margin-top: 1.5rem; font-size: .875rem; color: var(--muted); }
        .match-number { margin: .5rem 0 1rem; font-size: 3rem; font-weight: 700; letter-spacing: .1em; text-align: center; }
        .status { font-weight: 600; }
        """

    /// Waits for the user's answer on the phone: asks the server (which holds each question up
    /// to 25 seconds) until the request is no longer pending, then submits the page's form,
    /// which shows the outcome. Without script the user submits it with the button.
    static let signInScript = """
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
        """
}
